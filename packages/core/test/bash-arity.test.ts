import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { BashArity, Wildcard } from "../src/index.js"

const words = (command: string) => command.split(" ")

describe("BashArity", () => {
  it("takes the longest table key that starts the command", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["git commit -m fix", "git commit *"],
      ["git status", "git status *"],
      ["git stash pop", "git stash pop *"],
      ["npm install left-pad", "npm install *"],
      ["npm run test -- --watch", "npm run test *"],
      ["npm run build", "npm run build *"],
      ["docker compose up -d", "docker compose up *"],
      ["docker ps", "docker ps *"],
      ["ls -la", "ls *"],
      ["rm -rf build", "rm *"],
      ["python -m pytest tests", "python -m pytest *"],
      ["cargo build --release", "cargo build *"],
      ["make", "make"],
      ["git", "git"],
      ["npm run", "npm run"],
    ]
    for (const [command, pattern] of cases) expect(BashArity.pattern(words(command)), command).toBe(pattern)
  })

  it("saves the exact command when an option falls inside the prefix", () => {
    expect(BashArity.pattern(words("git -C /tmp push"))).toBe("git -C /tmp push")
    expect(BashArity.pattern(words("npm --prefix x run build"))).toBe("npm --prefix x run build")
    expect(BashArity.prefix(words("git -C /tmp push"))).toEqual({ words: words("git -C /tmp push"), exact: true })
  })

  it("escapes wildcards in the command's own words", () => {
    const pattern = BashArity.pattern(["npm", "run", "te*t", "--watch"])
    expect(pattern).toBe(`${Wildcard.literal("npm run te*t")} *`)
    expect(Wildcard.match("npm run te*t --watch", pattern)).toBe(true)
    expect(Wildcard.match("npm run test", pattern)).toBe(false)
    expect(Wildcard.match("npm run teXXt", pattern)).toBe(false)
    expect(BashArity.pattern(["git", "commit", "-m", "a*b"])).toBe("git commit *")
  })

  it("extends and overrides the table from configuration, ignoring bad entries", () => {
    const table = BashArity.extend(
      BashArity.DEFAULT,
      { make: 2, "  pnpm   run ": 4, git: 3, bad: 0, worse: 1.5 },
      undefined,
    )
    expect(BashArity.pattern(words("make test VERBOSE=1"), table)).toBe("make test *")
    expect(BashArity.pattern(words("pnpm run test unit x"), table)).toBe("pnpm run test unit *")
    expect(BashArity.pattern(words("git remote add origin x"), table)).toBe("git remote add *")
    expect(BashArity.pattern(words("git commit -m x"), table)).toBe("git commit -m x")
    expect(table.has("bad")).toBe(false)
    expect(table.has("worse")).toBe(false)
    expect(BashArity.DEFAULT.get("make")).toBe(2)
  })

  it("a saved pattern always matches the command it was saved from, and only commands with its prefix", () => {
    const word = FastCheck.stringMatching(/^[a-z*?.\-]{1,6}$/)
    FastCheck.assert(
      FastCheck.property(FastCheck.array(word, { minLength: 1, maxLength: 6 }), word, (argv, other) => {
        const pattern = BashArity.pattern(argv)
        expect(Wildcard.match(argv.join(" "), pattern)).toBe(true)
        const { words: prefix, exact } = BashArity.prefix(argv)
        const changed = [...prefix.slice(0, -1), `${prefix[prefix.length - 1]}${other}`]
        if (!exact) expect(Wildcard.match([...changed, ...argv.slice(prefix.length)].join(" "), pattern)).toBe(false)
      }),
    )
  })
})
