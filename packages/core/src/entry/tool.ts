/**
 * `@toolgate/core/tool`: the tool contract alone — making tools, registering them, materializing a turn, settling
 * calls and bounding their output. Loads no SQLite and starts no child process, so an embedder that only defines
 * and settles tools pays for nothing else.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ApplicationTools from "../tool/application-tools.js"
/**
 * Model-facing tool types: calls, definitions, content, outputs and results.
 *
 * @since 0.2.0
 * @category modules
 */
export * as LLM from "../values/llm.js"
/**
 * JSON Schemas rewritten into the form model providers accept.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ProviderSchema from "../values/provider-schema.js"
/**
 * The one builder of settle inputs: an identity (session, agent, assistant message) plus one call.
 *
 * @since 0.3.0
 * @category modules
 */
export * as SettleInput from "../tool/settle-input.js"
/**
 * The tool contract: making tools as opaque values and settling their calls.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Tool from "../tool/tool.js"
/**
 * The one place model output is bounded; over a limit the full text is kept in a file.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ToolOutputStore from "../tool/tool-output-store.js"
/**
 * The Location-scoped tool registry: registrations, turn materializations and settlement.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ToolRegistry from "../tool/tool-registry.js"
/**
 * The settlement port of tool hooks: what a materialization runs around a call when the Location has hooks.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ToolHooks from "../tool/tool-hooks.js"
/**
 * The registration-only view of the registry that Location producers receive.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Tools from "../tool/tools.js"
