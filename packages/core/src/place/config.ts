/**
 * The configuration entries the library reads, lowest to highest priority. Documents are schema-validated
 * `toolgate.json(c)` files; directory entries point at `.toolgate`-style folders (agents, skills). Discovery runs
 * from the project root down to the Location plus the user's configuration directory, and every discovered file is
 * confined like `read` (see docs/trust/protected-paths.md).
 *
 * This module is the namespace embedders import; each concept lives in `internal/`: the schemas
 * (`config-schema.ts`), the deprecated spellings of keys (`config-keys.ts`), the document model and its service
 * (`config-document.ts`), the markdown agent files (`config-agent-files.ts`) and discovery with its confinement and
 * layers (`config-discovery.ts`).
 *
 * @since 0.1.0
 */
import * as Keys from "./internal/config-keys.js"

/**
 * `Info` and its sections: `PermissionRule`, `Agent`, `Bash`, `BashSandbox`, `BashEnv`, `ToolOutput`,
 * `ImageAttachments`, `Preset`.
 *
 * @since 0.3.0
 */
export * from "./internal/config-schema.js"
/**
 * `Document`, `Directory`, `Entry`, the `Service`, `parseDocument`, `InvalidError`, `documents`, `latest` and the
 * fixed layers.
 *
 * @since 0.3.0
 */
export * from "./internal/config-document.js"
/**
 * `agentFiles` and `Skipped`: the markdown agent files of a configuration directory.
 *
 * @since 0.3.0
 */
export * from "./internal/config-agent-files.js"
/**
 * `layer`, `layerLenient`, `projectChain`, `confine`, `warnSkipped`, `FILE_NAMES`, `DIRECTORY_NAME`.
 *
 * @since 0.3.0
 */
export * from "./internal/config-discovery.js"

/**
 * A deprecated spelling of a configuration key: in the objects at `section`, `alias` is read as `canonical`.
 *
 * @since 0.4.0
 * @category models
 */
export type Alias = Keys.Alias

/**
 * A deprecated spelling found in a document: the key as written and its canonical name.
 *
 * @since 0.4.0
 * @category models
 */
export type DeprecatedKey = Keys.DeprecatedKey

/**
 * Every deprecated (camelCase) spelling of a configuration key, by section; the canonical keys are snake_case.
 *
 * @since 0.4.0
 * @category constants
 */
export const ALIASES: ReadonlyArray<Alias> = Keys.ALIASES

/**
 * A raw document with its deprecated spellings renamed to their canonical keys, and the spellings found; or the
 * message for an object holding both spellings of one key. `parseDocument` runs it before decoding.
 *
 * @since 0.4.0
 * @category utilities
 */
export const canonicalKeys = Keys.canonicalKeys
