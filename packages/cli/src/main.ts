/**
 * The `toolgate` entry point: runs the CLI and maps the outcome to an exit code (0 ok, 1 failure, 2 usage error,
 * 3 the demo session was stopped by a rejection or a dismissed question).
 * Every other failure — a defect while starting, such as a database that cannot be opened — is printed as one line
 * `toolgate: <message: cause: SQLITE_CODE: detail>` and exits 1.
 *
 * @since 0.1.0
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Cli from "./cli.js"
import { ExitCode, UsageError } from "./errors.js"
import * as Paths from "./paths.js"
import * as Screen from "./screen.js"

let code: number = ExitCode.ok

const missing = Paths.missingValue(process.argv.slice(2))

const program = (
  missing === undefined ? Cli.run(process.argv) : Effect.fail(new UsageError({ message: missing }))
).pipe(
  Effect.catchAll((error) => {
    // @effect/cli has already printed its usage error and help.
    if (ValidationError.isValidationError(error)) return Effect.sync(() => void (code = ExitCode.usage))
    const exit =
      error._tag === "Cli.UsageError"
        ? ExitCode.usage
        : error._tag === "Cli.StoppedError"
          ? ExitCode.stopped
          : ExitCode.failure
    return Effect.zipRight(
      Console.error(`toolgate: ${error.message}`),
      Effect.sync(() => void (code = exit)),
    )
  }),
  // The process boundary: whatever is left (defects) is reported in one line; interruption stays interruption.
  Effect.catchAllCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.failCause(cause)
      : // The library loads only here: `toolgate --help` must not pay for it (see bench/startup.ts).
        // If the library itself cannot load, the failure is still printed, as its plain message.
        Effect.promise(() => {
          const error = Cause.squash(cause)
          return import("@toolgate/core").then(
            ({ Database }) => Database.describe(error),
            () => (error instanceof Error ? error.message : String(error)),
          )
        }).pipe(
          Effect.flatMap((line) => Console.error(`toolgate: ${line}`)),
          Effect.zipRight(Effect.sync(() => void (code = ExitCode.failure))),
        ),
  ),
  Effect.provide(NodeContext.layer),
)

// No colour escapes when the output is not a terminal or NO_COLOR is set.
const main = Effect.consoleWith((base) => Effect.withConsole(program, Screen.plainConsole(base)))

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? code : Exit.isInterrupted(exit) ? 130 : ExitCode.failure),
})
