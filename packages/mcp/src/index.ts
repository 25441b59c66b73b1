/**
 * @toolgate/mcp — one toolgate Location's tools as an MCP server. Every module is a namespace.
 *
 * @since 0.1.0
 */
export * as McpCommand from "./command.js"
export * as McpPrompts from "./prompts.js"
export * as McpServer from "./server.js"
export * as McpTools from "./tools.js"
