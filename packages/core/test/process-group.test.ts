import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ProcessGroup } from "../src/index.js"
import { alive } from "./support/process-tree.js"

const sh = (script: string): ProcessGroup.Command => ({ command: script, shell: "/bin/sh" })

describe("ProcessGroup.run line streaming", () => {
  it.live("hands stdout over line by line, the unterminated last line at the end, and still captures it", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const result = yield* ProcessGroup.run(sh("printf 'a\\nbb\\n\\nccc'"), {
        onLine: (line) => void lines.push(line.toString("utf8")),
      })
      expect(lines).toEqual(["a", "bb", "", "ccc"])
      expect(Buffer.from(result.stdout).toString("utf8")).toBe("a\nbb\n\nccc")
      expect(result.exitCode).toBe(0)
      expect(result.stopped).toBeUndefined()
    }),
  )

  it.live("a line split across many chunks arrives whole", () =>
    Effect.gen(function* () {
      const lines: Array<number> = []
      yield* ProcessGroup.run(sh("head -c 300000 /dev/zero | tr '\\0' x; echo; echo end"), {
        maxOutputBytes: 0,
        onLine: (line) => void lines.push(line.length),
      })
      expect(lines).toEqual([300000, 3])
    }),
  )

  it.live("false from onLine stops the run and kills the whole group, grandchildren included", () =>
    Effect.gen(function* () {
      let grandchild: number | undefined
      const seen: Array<string> = []
      const result = yield* ProcessGroup.run(sh("sleep 300 & echo $!; echo first; echo second; wait"), {
        onLine: (line) => {
          const text = line.toString("utf8")
          seen.push(text)
          if (grandchild === undefined) grandchild = Number(text)
          return text !== "first"
        },
      })
      expect(result.stopped).toBe(true)
      expect(seen).toEqual([String(grandchild), "first"])
      expect(grandchild).toBeGreaterThan(0)
      expect(alive(grandchild!)).toBe(false)
    }),
  )

  it.live("a line longer than maxLineBytes is handed over unterminated at once and its rest dropped", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      yield* ProcessGroup.run(sh("head -c 200000 /dev/zero | tr '\\0' x; echo; echo next"), {
        maxOutputBytes: 0,
        maxLineBytes: 1000,
        onLine: (line) => void lines.push(line.toString("utf8")),
      })
      expect(lines).toHaveLength(2)
      expect(lines[0]!.length).toBeGreaterThan(1000)
      expect(lines[0]!.length).toBeLessThan(200000)
      expect(/^x+$/.test(lines[0]!)).toBe(true)
      expect(lines[1]).toBe("next")
    }),
  )

  it.live("a spawn failure is an AppProcessError with its cause", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        ProcessGroup.run({ command: "/nonexistent/toolgate-binary" }, { onLine: () => true }),
      )
      expect(error._tag).toBe("AppProcess.AppProcessError")
      expect((error.cause as NodeJS.ErrnoException).code).toBe("ENOENT")
    }),
  )
})
