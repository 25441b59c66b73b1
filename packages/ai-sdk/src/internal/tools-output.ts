/**
 * What `AiSdkTools`' `execute` yields and what the model reads of it.
 *
 * @since 0.3.0
 * @internal
 */
import { type LLM } from "@toolgate/core"

type ModelOutput =
  | { readonly type: "text"; readonly value: string }
  | { readonly type: "json"; readonly value: unknown }
  | {
      readonly type: "content"
      readonly value: ReadonlyArray<
        | { readonly type: "text"; readonly text: string }
        | {
            readonly type: "file"
            readonly data: { readonly type: "data"; readonly data: string }
            readonly mediaType: string
            readonly filename?: string
          }
      >
    }

const base64Of = (uri: string): string => uri.slice(uri.indexOf(",") + 1)

/**
 * What the model reads for a successful result: text stays text, JSON stays JSON, and content becomes AI SDK
 * content with file parts carried as base64 data.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelOutput = (result: Exclude<LLM.ToolResultValue, { readonly type: "error" }>): ModelOutput => {
  switch (result.type) {
    case "text":
      return { type: "text", value: typeof result.value === "string" ? result.value : JSON.stringify(result.value) }
    case "json":
      return { type: "json", value: result.value ?? null }
    case "content":
      return {
        type: "content",
        value: result.value.map((part) =>
          part.type === "text"
            ? { type: "text", text: part.text }
            : {
                type: "file",
                data: { type: "data", data: base64Of(part.uri) },
                mediaType: part.mime,
                ...(part.name === undefined ? {} : { filename: part.name }),
              },
        ),
      }
  }
}

/**
 * A successful result as `execute` yields it last: our result value, plus the managed output files when bounding
 * kept one (`outputPaths`, absolute paths the caller may read in full).
 *
 * @since 0.2.0
 * @category models
 */
export type Result = Exclude<LLM.ToolResultValue, { readonly type: "error" }> & {
  readonly outputPaths?: ReadonlyArray<string>
}

/**
 * A preliminary result: one progress report of the running call. `output` holds the output reported so far (its
 * last `PRELIMINARY_OUTPUT_LIMIT` characters), so a UI that replaces the previous preliminary value loses nothing
 * recent. The model never sees preliminary results.
 *
 * @since 0.2.0
 * @category models
 */
export interface Preliminary {
  readonly type: "progress"
  readonly message: string
  readonly progress?: number
  readonly total?: number
  readonly output: string
}

/**
 * What `execute` yields: preliminary values while the call runs, then one `Result`.
 *
 * @since 0.2.0
 * @category models
 */
export type Output = Result | Preliminary

/**
 * How many trailing characters of reported output a preliminary result carries.
 *
 * @since 0.2.0
 * @category constants
 */
export const PRELIMINARY_OUTPUT_LIMIT = 65_536
