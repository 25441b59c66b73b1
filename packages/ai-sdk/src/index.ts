/**
 * `@toolgate/ai-sdk` — toolgate tools for the Vercel AI SDK. Every module is a namespace.
 *
 * @since 0.1.0
 * @category modules
 */
export * as AiSdkTools from "./tools.js"
