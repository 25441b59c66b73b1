/**
 * @toolgate/core — the tool layer and permission gate of an agent runner. Every module is a namespace.
 *
 * @since 0.1.0
 */
export * as AgentV2 from "./agent.js"
export * as ApplicationTools from "./tool/application-tools.js"
export * as Config from "./config.js"
export * as Database from "./database.js"
export * as EventV2 from "./bus.js"
export * as Global from "./global.js"
export * as FileDiff from "./file-diff.js"
export * as FileMutation from "./file-mutation.js"
export * as Identifier from "./id.js"
export * as LLM from "./llm.js"
export * as Location from "./location.js"
export * as LocationMutation from "./location-mutation.js"
export * as PermissionSaved from "./permission/saved.js"
export * as PermissionV2 from "./permission.js"
export * as Project from "./project.js"
export * as SessionV2 from "./session.js"
export * as State from "./state.js"
export * as Tool from "./tool/tool.js"
export * as ToolOutputStore from "./tool-output-store.js"
export * as ToolRegistry from "./tool/registry.js"
export * as Tools from "./tool/tools.js"
export * as Wildcard from "./wildcard.js"
