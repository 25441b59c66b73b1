/**
 * The configuration entries the library reads, lowest to highest priority. Documents are schema-validated
 * `toolgate.json(c)` files; directory entries point at `.toolgate`-style folders (agents, skills). Discovery runs
 * from the project root down to the Location plus the user's configuration directory, and every discovered file is
 * confined like `read` (see docs/trust/protected-paths.md).
 *
 * This module is the namespace embedders import; each concept lives in `internal/`: the schemas
 * (`config-schema.ts`), the document model and its service (`config-document.ts`), the markdown agent files
 * (`config-agent-files.ts`) and discovery with its confinement and layers (`config-discovery.ts`).
 *
 * @since 0.1.0
 */

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
