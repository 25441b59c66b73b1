/**
 * The `websearch` tool: a provider-independent local web search that calls an Exa or Parallel MCP
 * endpoint with one JSON-RPC `tools/call`. Endpoints and API keys come from `WebSearchTool.Config`, so tests point
 * them at a loopback server. Credentials travel only in the transport (query parameter or bearer header) and never
 * reach the model output.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as CorePackage from "../system/core-package.js"
import * as LLM from "../values/llm.js"
import * as PermissionV2 from "../permission/permission.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"
import * as Mcp from "./internal/web-search-mcp.js"

/**
 * The registered tool name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "websearch"
/**
 * The successful result text when the provider returned nothing usable.
 *
 * @since 0.1.0
 * @category constants
 */
export const NO_RESULTS = "No search results found. Please try a different query."
/**
 * The default Exa MCP endpoint.
 *
 * @since 0.1.0
 * @category constants
 */
export const EXA_URL = "https://mcp.exa.ai/mcp"
/**
 * The default Parallel MCP endpoint.
 *
 * @since 0.1.0
 * @category constants
 */
export const PARALLEL_URL = "https://search.parallel.ai/mcp"
/**
 * The largest accepted `numResults`.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_NUM_RESULTS = 20
/**
 * The largest accepted `contextMaxCharacters`.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CONTEXT_CHARACTERS = 50_000
/**
 * The largest accepted provider response body.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESPONSE_BYTES: number = Mcp.MAX_RESPONSE_BYTES
/**
 * The per-request timeout.
 *
 * @since 0.1.0
 * @category constants
 */
export const REQUEST_TIMEOUT: Duration.Duration = Mcp.REQUEST_TIMEOUT

/**
 * The `@toolgate/core` package version, sent in Parallel's user agent.
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION: string = CorePackage.version

/**
 * The model-facing description (our own wording); the year is fixed when the module loads.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description = [
  "Look things up on the web through this session's local search provider. Use it for information newer than your training data.",
  "The tool runs locally and is backed by Exa or Parallel, independent of the model provider; web search tools hosted by a model provider are different and run on the provider's side.",
  "You can optionally set how many results to return, the live-crawl mode ('fallback' or 'preferred'), the search type ('auto', 'fast' or 'deep') and the maximum number of context characters.",
  `It is currently ${new Date().getFullYear()}. Search with this year in mind when you need recent information or current events.`,
].join("\n\n")

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * The tool input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  query: Schema.String.annotations({ description: "What to search the web for" }),
  numResults: Schema.optional(
    PositiveInt.pipe(Schema.lessThanOrEqualTo(MAX_NUM_RESULTS)).annotations({
      description: `How many results to return (8 when omitted, at most ${MAX_NUM_RESULTS})`,
    }),
  ),
  livecrawl: Schema.optional(
    Schema.Literal("fallback", "preferred").annotations({
      description:
        "Live crawling: 'fallback' crawls live only when no cached copy exists, 'preferred' crawls live first ('fallback' when omitted)",
    }),
  ),
  type: Schema.optional(
    Schema.Literal("auto", "fast", "deep").annotations({
      description:
        "Kind of search: 'auto' is balanced (the default), 'fast' answers quickly, 'deep' searches thoroughly",
    }),
  ),
  contextMaxCharacters: Schema.optional(
    PositiveInt.pipe(Schema.lessThanOrEqualTo(MAX_CONTEXT_CHARACTERS)).annotations({
      description: `Upper bound on the characters of the model-oriented context text (10000 when omitted, at most ${MAX_CONTEXT_CHARACTERS})`,
    }),
  ),
})
/**
 * @see Input
 *
 * @since 0.1.0
 * @category models
 */
export type Input = typeof Input.Type

/**
 * The search providers.
 *
 * @since 0.1.0
 * @category models
 */
export const Provider = Schema.Literal("exa", "parallel")
/**
 * @see Provider
 *
 * @since 0.1.0
 * @category models
 */
export type Provider = typeof Provider.Type

/**
 * The domain output, also the structured output.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({ provider: Provider, text: Schema.String })
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The provider configuration.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly provider?: Provider
  readonly enableExa: boolean
  readonly enableParallel: boolean
  readonly exaUrl: string
  readonly parallelUrl: string
  readonly exaApiKey?: string
  readonly parallelApiKey?: string
}

/**
 * The web search configuration service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Config extends Context.Tag("@toolgate/v2/WebSearchConfig")<Config, Settings>() {}

/**
 * Explicit values for `layerConfig`; the URLs default to the public endpoints and the flags to false.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigInput {
  readonly provider?: Provider
  readonly enableExa?: boolean
  readonly enableParallel?: boolean
  readonly exaUrl?: string
  readonly parallelUrl?: string
  readonly exaApiKey?: string
  readonly parallelApiKey?: string
}

/**
 * Completes explicit values with the defaults.
 *
 * @since 0.1.0
 * @category utilities
 */
export const settings = (values: ConfigInput = {}): Settings => ({
  ...(values.provider === undefined ? {} : { provider: values.provider }),
  enableExa: values.enableExa ?? false,
  enableParallel: values.enableParallel ?? false,
  exaUrl: values.exaUrl ?? EXA_URL,
  parallelUrl: values.parallelUrl ?? PARALLEL_URL,
  ...(values.exaApiKey === undefined ? {} : { exaApiKey: values.exaApiKey }),
  ...(values.parallelApiKey === undefined ? {} : { parallelApiKey: values.parallelApiKey }),
})

/**
 * The configuration from explicit values (tests point both URLs at a loopback server).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (values: ConfigInput = {}): Layer.Layer<Config> => Layer.succeed(Config, settings(values))

const truthy = (value: string | undefined) => {
  const lowered = value?.toLowerCase()
  return lowered === "true" || lowered === "1"
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === "" ? undefined : value)

/**
 * The configuration an environment describes (the `TOOLGATE_*` flags, `EXA_API_KEY`, `PARALLEL_API_KEY`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEnvironment = (env: NodeJS.ProcessEnv = process.env): Settings => {
  const provider = env.TOOLGATE_WEBSEARCH_PROVIDER
  return settings({
    ...(provider === "exa" || provider === "parallel" ? { provider } : {}),
    enableExa:
      truthy(env.TOOLGATE_EXPERIMENTAL) || truthy(env.TOOLGATE_ENABLE_EXA) || truthy(env.TOOLGATE_EXPERIMENTAL_EXA),
    enableParallel: truthy(env.TOOLGATE_ENABLE_PARALLEL) || truthy(env.TOOLGATE_EXPERIMENTAL_PARALLEL),
    ...(nonEmpty(env.TOOLGATE_WEBSEARCH_EXA_URL) === undefined ? {} : { exaUrl: env.TOOLGATE_WEBSEARCH_EXA_URL! }),
    ...(nonEmpty(env.TOOLGATE_WEBSEARCH_PARALLEL_URL) === undefined
      ? {}
      : { parallelUrl: env.TOOLGATE_WEBSEARCH_PARALLEL_URL! }),
    ...(env.EXA_API_KEY === undefined ? {} : { exaApiKey: env.EXA_API_KEY }),
    ...(env.PARALLEL_API_KEY === undefined ? {} : { parallelApiKey: env.PARALLEL_API_KEY }),
  })
}

/**
 * The configuration read from `process.env` when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const defaultConfigLayer: Layer.Layer<Config> = Layer.sync(Config, () => fromEnvironment())

/**
 * FNV-1a (32-bit, unsigned) over the UTF-16 code units of `text`.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * Override, else Parallel if enabled, else Exa if enabled, else stable per session (even hash → exa).
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const selectProvider = (
  sessionID: string,
  flags: { readonly enableExa: boolean; readonly enableParallel: boolean } = {
    enableExa: false,
    enableParallel: false,
  },
  override?: Provider,
): Provider => {
  if (override !== undefined) return override
  if (flags.enableParallel) return "parallel"
  if (flags.enableExa) return "exa"
  const hash = sessionID === "" ? 0 : fnv1a(sessionID)
  return hash % 2 === 0 ? "exa" : "parallel"
}

export {
  /**
   * The provider answered with a status outside 2xx.
   *
   * @since 0.3.0
   * @category errors
   */
  StatusError,
  /**
   * The provider's response body is larger than `MAX_RESPONSE_BYTES`.
   *
   * @since 0.3.0
   * @category errors
   */
  TooLargeError,
  /**
   * The provider did not answer within `REQUEST_TIMEOUT`.
   *
   * @since 0.3.0
   * @category errors
   */
  TimeoutError,
  /**
   * The first non-empty content text of a JSON-RPC result: the whole body as one JSON payload first, else each
   * `data: ` line of an SSE stream. Payloads that are not JSON objects of the result shape are ignored.
   *
   * @since 0.1.0
   */
  parseResponse,
  /**
   * The Exa endpoint with the key, if any, as the `exaApiKey` query parameter.
   *
   * @since 0.1.0
   */
  exaEndpoint,
} from "./internal/web-search-mcp.js"

/**
 * Builds the tool around a captured HTTP client, configuration and permission service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (http: HttpClient.HttpClient, config: Settings, permission: PermissionV2.Interface) =>
  Tool.make({
    description,
    annotations: { title: "Search the web", readOnlyHint: true, openWorldHint: true },
    input: Input,
    output: Output,
    toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
    execute: (input, context) => {
      const provider = selectProvider(context.sessionID, config, config.provider)
      return Effect.gen(function* () {
        yield* permission.assert({
          action: name,
          resources: [input.query],
          save: ["*"],
          metadata: { ...input, provider },
          ...PermissionV2.fromToolCall(context),
        })
        const text =
          provider === "exa"
            ? yield* Mcp.call(
                http,
                Mcp.exaEndpoint(config.exaUrl, config.exaApiKey),
                "web_search_exa",
                {
                  query: input.query,
                  type: input.type || "auto",
                  numResults: input.numResults || 8,
                  livecrawl: input.livecrawl || "fallback",
                  ...(input.contextMaxCharacters === undefined
                    ? {}
                    : { contextMaxCharacters: input.contextMaxCharacters }),
                },
                {},
              )
            : yield* Mcp.call(
                http,
                config.parallelUrl,
                "web_search",
                { objective: input.query, search_queries: [input.query], session_id: context.sessionID },
                {
                  "User-Agent": `toolgate/${VERSION}`,
                  ...(config.parallelApiKey ? { Authorization: `Bearer ${config.parallelApiKey}` } : {}),
                },
              )
        return { provider, text: text ?? NO_RESULTS } satisfies Output
      }).pipe(
        // The transport error may carry the keyed URL or headers, so no cause is attached to the failure.
        Effect.mapError(
          PermissionV2.leafFailure(
            () => new LLM.ToolFailure({ message: `Unable to search the web for ${input.query}` }),
          ),
        ),
      )
    },
  })

/**
 * Registers `websearch` in the Location for the layer's lifetime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, HttpClient.HttpClient | Config | PermissionV2.Service | Tools.Service> =
  Tools.layer(
    name,
    Effect.gen(function* () {
      const http = yield* HttpClient.HttpClient
      const config = yield* Config
      const permission = yield* PermissionV2.Service
      return make(http, config, permission)
    }),
  )
