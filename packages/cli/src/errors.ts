/**
 * The CLI's own failures. `CliError` is a failure the user can act on (exit 1, message on stderr); usage errors
 * from `@effect/cli` (bad flags, unknown commands) and `UsageError` exit 2; `StoppedError` (the demo session was
 * stopped by a rejected permission or a dismissed question) exits 3.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A failure reported to the user as `toolgate: <message>` with exit code 1.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliError extends Schema.TaggedError<CliError>()("Cli.CliError", {
  message: Schema.String,
}) {}

/**
 * The command line was incomplete (exit code 2).
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Schema.TaggedError<UsageError>()("Cli.UsageError", {
  message: Schema.String,
}) {}

/**
 * The demo session did not finish: the user rejected a permission without a message or dismissed a question,
 * which stops the session (exit code 3).
 *
 * @since 0.3.0
 * @category errors
 */
export class StoppedError extends Schema.TaggedError<StoppedError>()("Cli.StoppedError", {
  message: Schema.String,
}) {}

/**
 * Exit codes: 0 ok, 1 failure, 2 usage error, 3 the demo session was stopped by the user.
 *
 * @since 0.1.0
 * @category models
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, stopped: 3 } as const
