/**
 * McpCommand.parseArgs and resolve: the one argument parser of `toolgate-mcp` and `toolgate mcp` (the cli's test
 * runs the same cases through `toolgate mcp`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { describe, expect, it } from "@effect/vitest"
import { McpCommand } from "@toolgate/mcp"

const refused = (argv: ReadonlyArray<string>) => {
  const parsed = McpCommand.parseArgs(argv)
  if (Either.isRight(parsed)) throw new Error(`accepted ${JSON.stringify(argv)}`)
  return [parsed.left.message, parsed.left.usage]
}

describe("McpCommand.parseArgs", () => {
  it("takes --flag value and --flag=value, keeps the last of a repeated option, and --no-watch", () => {
    expect(
      McpCommand.parseArgs(["--dir", "a", "--agent=plan", "--data", "d", "--heartbeat=5", "--no-watch", "--dir=b"]),
    ).toEqual(
      Either.right({ _tag: "Serve", flags: { dir: "b", agent: "plan", data: "d", heartbeat: "5", watch: false } }),
    )
  })

  it("--help and --version (and -h, -V) win over every other argument", () => {
    expect(McpCommand.parseArgs(["--bogus", "--help"])).toEqual(Either.right({ _tag: "Help" }))
    expect(McpCommand.parseArgs(["-h"])).toEqual(Either.right({ _tag: "Help" }))
    expect(McpCommand.parseArgs(["--dir", "x", "-V"])).toEqual(Either.right({ _tag: "Version" }))
  })

  it("refuses unknown options, positionals, valued options without a value and a value for --no-watch (usage)", () => {
    expect(refused(["--bogus"])).toEqual(["unexpected argument: --bogus (see --help)", true])
    expect(refused(["-x"])).toEqual(["unexpected argument: -x (see --help)", true])
    expect(refused(["--", "--dir", "x"])).toEqual(["unexpected argument: --dir (see --help)", true])
    expect(refused(["serve"])).toEqual(["unexpected argument: serve (see --help)", true])
    expect(refused(["--dir"])).toEqual(["--dir needs a value", true])
    expect(refused(["--dir="])).toEqual(["--dir needs a value", true])
    expect(refused(["--dir", "--agent", "plan"])).toEqual(["--dir needs a value", true])
    expect(refused(["--heartbeat"])).toEqual(["--heartbeat needs a value", true])
    expect(refused(["--no-watch=yes"])).toEqual(["--no-watch takes no value", true])
  })
})

describe("McpCommand.resolve", () => {
  it("checks what it parsed: the real directory, the heartbeat as a duration", () => {
    const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-mcp-command-")))
    try {
      expect(McpCommand.resolve(["--dir", directory, "--heartbeat", "250", "--no-watch"])).toEqual(
        Either.right({ _tag: "Serve", options: { directory, heartbeat: Duration.millis(250), watch: false } }),
      )
      const refused = McpCommand.resolve(["--dir", path.join(directory, "nope")])
      expect(Either.isLeft(refused) && [refused.left.message, refused.left.usage]).toEqual([
        `--dir ${path.join(directory, "nope")} does not exist`,
        false,
      ])
      expect(McpCommand.resolve(["--version"])).toEqual(Either.right({ _tag: "Version" }))
    } finally {
      fs.rmSync(directory, { recursive: true, force: true })
    }
  })
})
