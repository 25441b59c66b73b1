/**
 * The CLI's own failures. `CliError` is a failure the user can act on (exit 1, message on stderr); usage errors
 * from `@effect/cli` (bad flags, unknown commands) exit 2.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A failure reported to the user as `toolgate: <message>` with exit code 1.
 *
 * @since 0.1.0
 */
export class CliError extends Schema.TaggedError<CliError>()("Cli.CliError", {
  message: Schema.String,
}) {}

/**
 * The command line was incomplete (exit code 2).
 *
 * @since 0.1.0
 */
export class UsageError extends Schema.TaggedError<UsageError>()("Cli.UsageError", {
  message: Schema.String,
}) {}

/**
 * Exit codes.
 *
 * @since 0.1.0
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const
