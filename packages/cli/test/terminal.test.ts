/**
 * The CLI as a terminal program: tables fit the width, no escapes unless a terminal without NO_COLOR, Ctrl-C at a
 * prompt exits 130, a question is printed once, options without values are named, and `demo --sandbox` reaches the
 * Location's configuration. Real processes; a real terminal through tmux.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Config, Core } from "@toolgate/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { locationConfig } from "../src/demo.js"
import { missingValue } from "../src/paths.js"
import { render, wrap } from "../src/table.js"
import { BIN, section, tempDir, toolgate } from "./support.js"

const ESC = "\x1b["

/** Runs `toolgate ...args` with stdout and stderr piped and the environment given (no NO_COLOR unless set). */
const piped = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, home = tempDir()) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const base = { ...process.env }
    delete base.NO_COLOR
    const child = spawn(process.execPath, [...BIN, ...args], {
      env: { ...base, XDG_DATA_HOME: path.join(home, "data"), XDG_CONFIG_HOME: path.join(home, "config"), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end("")
  })

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`

/**
 * A real terminal: a detached tmux session of `width` columns running `command` under `script`, which logs every
 * byte written to the terminal; the exit code goes to a file.
 */
const terminal = (name: string, command: ReadonlyArray<string>, env: Record<string, string>, width = 100) => {
  const home = tempDir("toolgate-tty-")
  const exit = path.join(home, "exit")
  const log = path.join(home, "log")
  const assignments = Object.entries({
    XDG_DATA_HOME: path.join(home, "data"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    ...env,
  })
    .map(([key, value]) => `${key}=${shellQuote(value)}`)
    .join(" ")
  const inner = `env -u NO_COLOR ${assignments} ${[process.execPath, ...BIN, ...command].map(shellQuote).join(" ")}`
  const script = `script -qfec ${shellQuote(inner)} ${shellQuote(log)}; echo $? > ${shellQuote(exit)}; sleep 600`
  // Each terminal has its own tmux server (`-L`): with one shared server, a session created while the previous
  // test's last session is being killed can meet a server that is shutting down and fail at once.
  const tmux = (args: ReadonlyArray<string>, options: { readonly stdio?: "ignore" } = {}) =>
    execFileSync("tmux", ["-L", name, ...args], options)
  tmux(["new-session", "-d", "-s", name, "-x", String(width), "-y", "50", "sh", "-c", script])
  const capture = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "")
  const keys = (...keys: ReadonlyArray<string>) => tmux(["send-keys", "-t", name, ...keys])
  const code = () => {
    const text = fs.existsSync(exit) ? fs.readFileSync(exit, "utf8").trim() : ""
    return text === "" ? undefined : Number(text)
  }
  const close = () => {
    try {
      tmux(["kill-server"], { stdio: "ignore" })
    } catch {
      // already gone
    }
  }
  return { home, capture, keys, code, close }
}

const until = async <A>(what: string, probe: () => A | undefined, timeout = 90_000): Promise<A> => {
  const deadline = Date.now() + timeout
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The text of one column of a rendered table, read by the positions of its rule line (whitespace removed). */
const columnText = (text: string, column: number): string => {
  const lines = text.split("\n")
  const rule = lines.findIndex((line) => /^ *-+( +-+)*$/.test(line))
  const spans = [...lines[rule]!.matchAll(/-+/g)].map((match) => [match.index!, match.index! + match[0].length])
  spans[spans.length - 1]![1] = Number.POSITIVE_INFINITY
  const [from, to] = spans[column]!
  return lines
    .slice(rule + 1)
    .map((line) => line.slice(from, to))
    .join("")
    .replace(/\s+/g, "")
}

describe("tables", () => {
  const rows = [
    ["psv_01J9ZK3", "global", "/very/long/directory/path/that/goes/on/and/on/for/a/while", "edit", "src/**/*.ts"],
    ["psv_02", "prj_abc", "(all)", "bash", "npm run test -- --reporter verbose --coverage --watch=false"],
  ]
  const headers = ["id", "project", "directory", "action", "resource"]

  it("fit the width by wrapping the widest columns; every character of every cell is still there", () => {
    for (const width of [40, 60, 80, 120]) {
      const text = render(headers, rows, "  ", width)
      for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(width)
      // Read each column back by the positions of the rule line: its cells, in order, come back whole.
      const lines = text.split("\n")
      const rule = lines.findIndex((line) => /^ *-+( +-+)*$/.test(line))
      const spans = [...lines[rule]!.matchAll(/-+/g)].map((match) => [match.index!, match.index! + match[0].length])
      spans[spans.length - 1]![1] = Number.POSITIVE_INFINITY
      for (const [column, [from, to]] of spans.entries()) {
        const read = lines
          .slice(rule + 1)
          .map((line) => line.slice(from, to))
          .join("")
          .replace(/\s+/g, "")
        expect(read).toBe(rows.map((row) => row[column]!.replace(/\s+/g, "")).join(""))
      }
    }
    // Wide enough: one line per row, as before.
    expect(render(headers, rows, "", 400).split("\n")).toHaveLength(4)
  })

  it("wrap breaks after separators and loses nothing", () => {
    const pieces = wrap("/a/b/c/d/e/f/g/h", 5)
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(5)
    expect(pieces.join("")).toBe("/a/b/c/d/e/f/g/h")
  })

  it("the demo summary fits COLUMNS and says where the sample project and the data live", async () => {
    const home = tempDir()
    const dir = path.join(home, "project")
    const data = path.join(home, "store")
    const run = await piped(["demo", "--yes", "--dir", dir, "--data", data], { COLUMNS: "72" }, home)
    expect(run.code).toBe(0)
    const summary = run.stdout.slice(run.stdout.lastIndexOf("Summary"))
    for (const line of summary.split("\n")) expect(line.length, line).toBeLessThanOrEqual(72)
    const where = columnText(section(run.stdout, "Where things are").join("\n"), 1)
    expect(where).toContain(dir)
    // read's outcome is its page trailer
    expect(columnText(section(run.stdout, "Calls").join("\n"), 4)).toMatch(/^lines1-\d+shown;endoffile/)
    expect(where).toContain(path.join(data, "toolgate.db"))
    expect(where).toContain(path.join(data, "tool-output"))
    expect(fs.existsSync(path.join(data, "toolgate.db"))).toBe(true)
    expect(run.stdout).not.toContain(ESC)
  }, 180_000)
})

describe("colour", () => {
  it("help piped to a file has no escapes, even without NO_COLOR", async () => {
    const run = await piped(["--help"], {})
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("USAGE")
    expect(run.stdout).not.toContain(ESC)
  }, 60_000)

  it("on a terminal: styled help, and plain help with NO_COLOR set", async () => {
    const styled = terminal(`tg-colour-${process.pid}`, ["--help"], {})
    try {
      await until("help exit", styled.code)
      expect(styled.capture()).toContain(ESC)
    } finally {
      styled.close()
    }
    const plain = terminal(`tg-nocolour-${process.pid}`, ["--help"], { NO_COLOR: "1" })
    try {
      await until("help exit", plain.code)
      const screen = plain.capture()
      expect(screen).toContain("USAGE")
      // tmux's own capture adds no SGR codes when the program wrote none.
      expect(screen).not.toMatch(/\x1b\[[0-9;]*m/)
    } finally {
      plain.close()
    }
  }, 120_000)
})

describe("prompts on a terminal", () => {
  it("Ctrl-C at a permission prompt exits 130 and rejects nothing", async () => {
    const dir = path.join(tempDir(), "project")
    const tty = terminal(`tg-ctrlc-${process.pid}`, ["demo", "--dir", dir], {})
    try {
      await until("the first prompt", () => (tty.capture().includes("Allow?") ? true : undefined))
      tty.keys("C-c")
      expect(await until("exit", tty.code)).toBe(130)
      const screen = tty.capture()
      expect(screen).not.toContain("Summary")
      // No rejection was recorded (the prompt's diff may itself say "reject": the sample's TODO does).
      expect(screen).not.toMatch(/permission .*: reject|\breject\s+you\b/)
      // the edit the prompt was about did not happen
      expect(fs.readFileSync(path.join(dir, "src/inventory.ts"), "utf8")).not.toContain("negative quantity")
    } finally {
      tty.close()
    }
  }, 120_000)

  it("a question is printed once: by the transcript, not again by the prompt", async () => {
    const dir = path.join(tempDir(), "project")
    const tty = terminal(`tg-question-${process.pid}`, ["demo", "--dir", dir], {}, 160)
    try {
      // Enter picks the first choice: `once` at every permission prompt, the first option at the question.
      let answered = 0
      await until(
        "the demo to finish",
        () => {
          if (tty.code() !== undefined) return true
          const screen = tty.capture()
          const prompts = (screen.match(/Allow\?|Choose/g) ?? []).length
          if (prompts > answered) {
            answered = prompts
            tty.keys("Enter")
          }
          return undefined
        },
        150_000,
      )
      expect(tty.code()).toBe(0)
      const history = tty.capture()
      const before = history.slice(0, history.indexOf("✓ question"))
      expect(before.split("Should the next release be 0.4.0?").length - 1).toBe(1)
    } finally {
      tty.close()
    }
  }, 180_000)
})

describe("options without a value", () => {
  it("--dir with no value says that a value is missing (exit 2)", async () => {
    const home = tempDir()
    for (const args of [
      ["demo", "--dir"],
      ["demo", "--dir", "--yes"],
      ["demo", "--dir="],
    ]) {
      const run = await toolgate(args, { home })
      expect(run.code).toBe(2)
      expect(run.stderr.trim()).toBe("toolgate: --dir needs a value (a directory), e.g. --dir <directory>")
    }
  }, 60_000)

  it("missingValue names the option and leaves values and positionals alone", () => {
    expect(missingValue(["demo", "--data"])).toContain("--data needs a value")
    expect(missingValue(["demo", "--dir", "x", "--yes"])).toBeUndefined()
    expect(missingValue(["permissions", "explain", "bash", "--", "--dir"])).toBeUndefined()
    expect(missingValue(["mcp", "--dir=/tmp"])).toBeUndefined()
    // mcp's options are checked by McpCommand.parseArgs, with toolgate-mcp's messages.
    expect(missingValue(["mcp", "--dir"])).toBeUndefined()
  })
})

describe("demo --sandbox", () => {
  it("puts bash in the bubblewrap sandbox through the Location's configuration", async () => {
    expect(locationConfig({ sandbox: false })).toBeUndefined()
    const config = locationConfig({ sandbox: true })!
    const directory = tempDir()
    const entries = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(Config.Service, (service) => service.entries()).pipe(
          Effect.provide(Core.layer({ directory, data: tempDir(), config, discover: false })),
        ),
      ),
    )
    expect(Config.latest(entries, "bash")).toEqual({ sandbox: { mode: "bubblewrap", fail_if_unavailable: true } })
  }, 60_000)

  it("runs the whole demo with bash sandboxed", async () => {
    const home = tempDir()
    const run = await toolgate(["demo", "--yes", "--sandbox", "--dir", path.join(home, "project")], { home })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("bash: inside the bubblewrap sandbox (--sandbox)")
    expect(section(run.stdout, "Calls").join("\n")).toMatch(/bash .* completed/)
  }, 180_000)
})
