/**
 * `@toolgate/core/tool`: the tool contract alone — making tools, registering them, materializing a turn, settling
 * calls and bounding their output. Loads no SQLite and starts no child process, so an embedder that only defines
 * and settles tools pays for nothing else.
 *
 * @since 0.2.0
 */
export * as ApplicationTools from "../tool/application-tools.js"
export * as LLM from "../values/llm.js"
export * as ProviderSchema from "../values/provider-schema.js"
export * as Tool from "../tool/tool.js"
export * as ToolOutputStore from "../tool/tool-output-store.js"
export * as ToolRegistry from "../tool/tool-registry.js"
export * as Tools from "../tool/tools.js"
