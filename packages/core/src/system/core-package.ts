/**
 * Files that ship with `@toolgate/core` and its dependencies, found at run time: the package version, the bash
 * grammar's WebAssembly file, the HTML converter run in a worker thread.
 *
 * Lookups are anchored at the installed `@toolgate/core` package (found by its own name), not at the calling
 * file: the same code then works from `dist/`, from the sources, and from the bundled `toolgate` and
 * `toolgate-mcp` bins, whose single file sits in another package's folder. Under pnpm's strict layout only
 * `@toolgate/core` itself can see its dependencies, so a lookup relative to a bundle would fail.
 *
 * @since 0.2.0
 */
import { createRequire } from "node:module"

/**
 * A `require` whose resolution starts at the installed `@toolgate/core` package: `require.resolve(name)` finds
 * what core depends on.
 *
 * @since 0.2.0
 * @category utilities
 */
export const require: NodeJS.Require = createRequire(
  createRequire(import.meta.url).resolve("@toolgate/core/package.json"),
)

/**
 * The `@toolgate/core` package version.
 *
 * @since 0.2.0
 * @category utilities
 */
export const version: string = (require("@toolgate/core/package.json") as { readonly version: string }).version
