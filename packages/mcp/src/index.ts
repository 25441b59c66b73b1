/**
 * `@toolgate/mcp` — one toolgate Location's tools as an MCP server. Every module is a namespace.
 *
 * @since 0.1.0
 * @category modules
 */
export * as McpCommand from "./command.js"
/**
 * What the server accepts as one JSON-RPC message, and what it answers for anything else.
 *
 * @since 0.3.0
 * @category modules
 */
export * as McpMessage from "./message.js"
/**
 * What the MCP server asks the user through elicitation: permission decisions and questions.
 *
 * @since 0.2.0
 * @category modules
 */
export * as McpPrompts from "./prompts.js"
/**
 * An MCP server exposing one Location's tools.
 *
 * @since 0.1.0
 * @category modules
 */
export * as McpServer from "./server.js"
/**
 * Conversions between toolgate's tool types and MCP's.
 *
 * @since 0.2.0
 * @category modules
 */
export * as McpTools from "./tools.js"
/**
 * The server's transports: stdio with a limit on one message, and the message check in front of any transport.
 *
 * @since 0.3.0
 * @category modules
 */
export * as McpTransport from "./transport.js"
