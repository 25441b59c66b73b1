/**
 * Facts about the `@toolgate/mcp` package that the command line needs before the server (and `@toolgate/core`) is
 * loaded, so `toolgate-mcp --help`, `--version` and argument errors answer without loading the library.
 *
 * @since 0.3.0
 */
import { createRequire } from "node:module"
import * as Duration from "effect/Duration"

/**
 * The version in `@toolgate/mcp`'s own package.json, found by the package's name (from the sources, `dist/` and the
 * bundled bin alike, as `CorePackage` finds `@toolgate/core`'s files).
 *
 * @since 0.3.0
 * @category constants
 */
export const VERSION: string = (
  createRequire(import.meta.url)("@toolgate/mcp/package.json") as { readonly version: string }
).version

/**
 * The default heartbeat of a call with a progress token.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_HEARTBEAT: Duration.Duration = Duration.seconds(1)
