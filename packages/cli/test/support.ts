import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * How tests start `toolgate`: the bundle of `src/main.ts` with `@toolgate/*` resolved to sources that the project's
 * global setup builds once per run (test/global-setup.ts), so no build is needed and a start takes well under a
 * second (the published `bin/toolgate.js` runs the bundle that scripts/bundle-bins.mjs builds from `dist/main.js`;
 * scripts/pack-check.mjs runs that one).
 */
export const BIN: ReadonlyArray<string> = [fileURLToPath(new URL("../test-bundle/toolgate.js", import.meta.url))]

/** A fresh real temp directory. */
export const tempDir = (prefix = "toolgate-cli-"): string =>
  fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

/** The outcome of one CLI run. */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `toolgate ...args` (see `BIN`) as a real child process with its own XDG directories under `home` (so no
 * user configuration or data is read), feeding `input` on stdin (closed right away when absent).
 */
export const toolgate = (
  args: ReadonlyArray<string>,
  options: { readonly home: string; readonly input?: string },
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...BIN, ...args], {
      env: {
        ...process.env,
        XDG_DATA_HOME: path.join(options.home, "data"),
        XDG_CONFIG_HOME: path.join(options.home, "config"),
        NO_COLOR: "1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** The lines of the summary section named `title` (up to the next blank line). */
export const section = (stdout: string, title: string): ReadonlyArray<string> => {
  const lines = stdout.split("\n")
  const start = lines.lastIndexOf(title)
  if (start === -1) return []
  const end = lines.findIndex((line, index) => index > start && line.trim() === "")
  return lines.slice(start + 1, end === -1 ? undefined : end)
}
