/**
 * What a model reads when its input fails the tool's schema: `Invalid tool input: ` and one line per offending
 * property, naming it, what was expected and what was sent, never a rendering of the whole schema as a type.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ToolTest } from "../src/entry/testing.js"
import { BashTool, Tool } from "../src/index.js"

const Edit = Schema.Struct({ old: Schema.String, new: Schema.String })
const input = Schema.Struct({
  command: Schema.String.annotations({ description: "The command to run" }),
  workdir: Schema.optional(Schema.String),
  timeout: Schema.optional(
    Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(600_000)).annotations({
      description: "Timeout in milliseconds.",
    }),
  ),
  mode: Schema.optional(Schema.Literal("fast", "safe")),
  edits: Schema.optional(Schema.Array(Edit)),
  count: Schema.optional(Schema.NumberFromString),
  either: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  name: Schema.optional(Schema.String.pipe(Schema.minLength(2))),
  word: Schema.optional(Schema.String.annotations({ message: () => "word must be one word" })),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
})
const tool = Tool.make({ description: "probe", input, output: Schema.Unknown, execute: () => Effect.succeed(null) })
const keys = "command, workdir, timeout, mode, edits, count, either, name, word, env"

const failure = (tool: Tool.AnyTool, value: unknown) =>
  Effect.runSync(Effect.flip(ToolTest.settle(tool, value))).message

describe("invalid tool input", () => {
  const rows: ReadonlyArray<readonly [unknown, string]> = [
    [{}, "command: missing, expected a string"],
    [{ command: 1 }, "command: expected a string, got 1"],
    [{ command: "x", timeout: -1 }, "timeout: expected a positive number, got -1"],
    [{ command: "x", timeout: 1.5 }, "timeout: expected an integer, got 1.5"],
    [{ command: "x", timeout: "5" }, 'timeout: expected a number, got "5"'],
    [{ command: "x", timeout: 10 ** 9 }, "timeout: expected a positive number with maximum 600000, got 1000000000"],
    [{ command: "x", extra: 1 }, `extra: unexpected property, expected one of ${keys}`],
    [{ command: "x", mode: "slow" }, 'mode: expected "fast" or "safe", got "slow"'],
    [
      { command: "x", edits: [{ old: "a", new: "b" }, { old: 1 }] },
      "edits[1].old: expected a string, got 1\nedits[1].new: missing, expected a string",
    ],
    [
      { command: "x", edits: [{ old: "a", new: "b", x: 1 }] },
      "edits[0].x: unexpected property, expected one of old, new",
    ],
    [{ command: "x", edits: "a" }, 'edits: expected an array, got "a"'],
    [{ command: "x", count: "abc" }, 'count: Unable to decode "abc" into a number'],
    [{ command: "x", either: true }, "either: expected a string or a number, got true"],
    [{ command: "x", name: "a" }, 'name: expected a string at least 2 character(s) long, got "a"'],
    [{ command: "x", word: 1 }, "word: word must be one word"],
    [{ command: "x", env: { PATH: 1 } }, "env.PATH: expected a string, got 1"],
    [{ command: "x", env: { "a b": 1 } }, 'env["a b"]: expected a string, got 1'],
    ["ls", 'expected an object, got "ls"'],
    [null, "expected an object, got null"],
    [
      { command: "x", description: "lists files", workdir: 3 },
      `description: unexpected property, expected one of ${keys}\nworkdir: expected a string, got 3`,
    ],
    [
      { command: "x", workdir: "y".repeat(100) + 1, timeout: "z".repeat(100) },
      `timeout: expected a number, got "${"z".repeat(58)}…`,
    ],
  ]
  for (const [value, problems] of rows) {
    it(`${JSON.stringify(value)?.slice(0, 60)}`, () => {
      expect(failure(tool, value)).toBe(`Invalid tool input: ${problems}`)
    })
  }

  it("never prints the schema as a type, whatever was sent", () => {
    for (const [value] of rows) {
      const message = failure(tool, value)
      expect(message).not.toMatch(/readonly|\{ |└─|├─|Int &|minLength\(|NumberFromString/)
      expect(message.startsWith("Invalid tool input: ")).toBe(true)
    }
  })

  it("the bash tool's timeout names the bound", () => {
    const bash = Tool.make({
      description: "bash input",
      input: BashTool.Input,
      output: Schema.Unknown,
      execute: () => Effect.succeed(null),
    })
    expect(failure(bash, { command: "ls", timeout: 0 })).toBe(
      "Invalid tool input: timeout: expected a positive number, got 0",
    )
    expect(failure(bash, { timeout: 5 })).toBe("Invalid tool input: command: missing, expected a string")
  })

  it("many problems are listed up to twenty, then counted", () => {
    const list = Tool.make({
      description: "list",
      input: Schema.Struct({ items: Schema.Array(Schema.Number) }),
      output: Schema.Unknown,
      execute: () => Effect.succeed(null),
    })
    const message = failure(list, { items: Array.from({ length: 25 }, (_, i) => `n${i}`) })
    const lines = message.split("\n")
    expect(lines[0]).toBe('Invalid tool input: items[0]: expected a number, got "n0"')
    expect(lines[19]).toBe('items[19]: expected a number, got "n19"')
    expect(lines[20]).toBe("… and 5 more problems")
    expect(lines).toHaveLength(21)
  })
})
