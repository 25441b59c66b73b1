/**
 * The `toolgate-mcp` entry point: serves a Location over stdio. A failure (a database that cannot be opened, a
 * Location that is not a directory, …) is printed as one line `toolgate-mcp: <message: cause: SQLITE_CODE: detail>`
 * on stderr and exits 1.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Runtime from "effect/Runtime"
import { main } from "./command.js"

try {
  await main(process.argv.slice(2))
} catch (error) {
  const reason = Runtime.isFiberFailure(error) ? Cause.squash(error[Runtime.FiberFailureCauseId]) : error
  // The library loads here only when starting failed after it was loaded anyway.
  const line = await import("@toolgate/core").then(
    ({ Database }) => Database.describe(reason),
    () => (reason instanceof Error ? reason.message : String(reason)),
  )
  process.stderr.write(`toolgate-mcp: ${line}\n`)
  process.exit(1)
}
