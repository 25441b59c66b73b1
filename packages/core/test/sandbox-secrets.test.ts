/**
 * The call-time search for the secret-file family, with and without the listing cache a Location keeps: every
 * change to a tree (a new file, a rename into it, a new directory, a removal) is found on the next search, and an
 * unchanged tree gives the same answer.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as Secrets from "../src/world/sandbox/internal/secrets.js"
import { tempDir } from "./support/location.js"

const HOUR_AGO = new Date(Date.now() - 3_600_000)

/** Moves every directory's modification time an hour back, so a later change is a different time for sure. */
const age = (root: string): void => {
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory()) age(path.join(root, entry.name))
  }
  fs.utimesSync(root, HOUR_AGO, HOUR_AGO)
}

/**
 * Ages the changed directories and their ancestors up to `root` (only those), standing in for the time that
 * passes between two calls: a later change then moves their modification time for sure, and every other directory
 * keeps its times, so its cached listing is used.
 */
const settle = (root: string, ...changed: ReadonlyArray<string>): void => {
  const touched = new Set<string>()
  for (let directory of changed) {
    while (directory.startsWith(root)) {
      touched.add(directory)
      if (directory === root) break
      directory = path.dirname(directory)
    }
  }
  for (const directory of touched) if (fs.existsSync(directory)) fs.utimesSync(directory, HOUR_AGO, HOUR_AGO)
}

const write = (file: string, text = "x") => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const sorted = (found: ReadonlyArray<string> | undefined) => [...(found ?? [])].sort()

describe("Secrets.findSecretFiles", () => {
  it.scoped("finds the family, skips templates, node_modules and .git, and resolves links to their targets", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-secrets-")
      write(path.join(root, ".env"))
      write(path.join(root, "a", "b", ".ENV.production"))
      write(path.join(root, "a", ".envrc"))
      write(path.join(root, ".env.example"))
      write(path.join(root, "node_modules", "p", ".env"))
      write(path.join(root, ".git", ".env"))
      write(path.join(root, "target.txt"))
      fs.symlinkSync(path.join(root, "target.txt"), path.join(root, "linked.env"))
      fs.symlinkSync(path.join(root, "missing"), path.join(root, "dangling.env"))
      expect(sorted(Secrets.findSecretFiles(root))).toEqual(
        sorted([
          path.join(root, ".env"),
          path.join(root, "a", "b", ".ENV.production"),
          path.join(root, "a", ".envrc"),
          path.join(root, "target.txt"),
        ]),
      )
    }),
  )

  it.scoped("gives up past the entry limit", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-secrets-")
      for (let i = 0; i < 20; i++) write(path.join(root, `d${i}`, "f"))
      expect(Secrets.findSecretFiles(root, 30)).toBeUndefined()
      expect(Secrets.findSecretFiles(root, 100)).toEqual([])
    }),
  )

  it.scoped("with a cache, reads only changed directories and finds every change made between searches", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-secrets-")
      const elsewhere = yield* tempDir("toolgate-secrets-outside-")
      write(path.join(root, "src", "deep", "file.ts"))
      write(path.join(root, "config", "a.json"))
      age(root)
      const cache: Secrets.SearchCache = new Map()
      const search = () => sorted(Secrets.findSecretFiles(root, Secrets.SEARCH_LIMIT, cache, 0n))
      expect(search()).toEqual([])
      expect(cache.size).toBe(4)
      const config = cache.get(path.join(root, "config"))

      write(path.join(root, "src", "deep", ".env.local"))
      settle(root, path.join(root, "src", "deep"))
      expect(search()).toEqual([path.join(root, "src", "deep", ".env.local")])
      // An unchanged directory was not read again.
      expect(cache.get(path.join(root, "config"))).toBe(config)

      write(path.join(elsewhere, ".env"))
      fs.renameSync(path.join(elsewhere, ".env"), path.join(root, "config", ".env"))
      write(path.join(root, "new", "nested", ".envrc"))
      settle(root, path.join(root, "config"), path.join(root, "new", "nested"))
      expect(search()).toEqual(
        sorted([
          path.join(root, "src", "deep", ".env.local"),
          path.join(root, "config", ".env"),
          path.join(root, "new", "nested", ".envrc"),
        ]),
      )

      fs.rmSync(path.join(root, "src"), { recursive: true })
      settle(root, root)
      expect(search()).toEqual(sorted([path.join(root, "config", ".env"), path.join(root, "new", "nested", ".envrc")]))
      expect([...cache.keys()].some((key) => key.startsWith(path.join(root, "src")))).toBe(false)
    }),
  )

  it.scoped("with a cache, agrees with a fresh search after any sequence of changes", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-secrets-")
      const directories = ["", "a", "a/b", "c"]
      const names = [".env", ".env.local", "notes.txt", ".env.example", ".envrc"]
      const change = FastCheck.record({
        directory: FastCheck.constantFrom(...directories),
        name: FastCheck.constantFrom(...names),
        remove: FastCheck.boolean(),
      })
      FastCheck.assert(
        FastCheck.property(FastCheck.array(FastCheck.array(change, { maxLength: 4 }), { maxLength: 6 }), (rounds) => {
          fs.rmSync(root, { recursive: true, force: true })
          fs.mkdirSync(root)
          const cache: Secrets.SearchCache = new Map()
          for (const round of rounds) {
            for (const { directory, name, remove } of round) {
              const file = path.join(root, directory, name)
              if (remove) fs.rmSync(file, { force: true })
              else write(file)
            }
            settle(root, ...round.map(({ directory }) => path.join(root, directory)))
            const cached = sorted(Secrets.findSecretFiles(root, Secrets.SEARCH_LIMIT, cache, 0n))
            if (JSON.stringify(cached) !== JSON.stringify(sorted(Secrets.findSecretFiles(root)))) return false
          }
          return true
        }),
        { numRuns: 40 },
      )
    }),
  )
})
