/**
 * The single model-output bounding boundary. The registry calls `bound` exactly once per successful settlement;
 * within limits the output passes through untouched, over a limit the full text is kept in a managed file and the
 * model receives a head+tail preview naming it.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"
import type * as LLM from "./llm.js"

/** Default line limit. */
export const MAX_LINES = 2000
/** Default byte limit (50 KiB). */
export const MAX_BYTES = 50 * 1024
/** How long managed files are kept. */
export const RETENTION = Duration.days(7)
/** The managed directory under the data directory. */
export const MANAGED_DIRECTORY = "tool-output"

/** What `bound` receives. */
export interface BoundInput {
  readonly sessionID: string
  readonly toolCallID: string
  readonly output: LLM.ToolOutput
}

/** What `bound` returns; `outputPaths` lists the managed file when the output was cut. */
export interface BoundResult {
  readonly output: LLM.ToolOutput
  readonly outputPaths: ReadonlyArray<string>
}

/** The effective limits. */
export interface Limits {
  readonly maxLines: number
  readonly maxBytes: number
}

/** Keeping the complete output failed, so the settlement fails instead of producing a lossy success. */
export class StorageError extends Schema.TaggedError<StorageError>()("ToolOutputStore.StorageError", {
  operation: Schema.Literal("encode", "write"),
  cause: Schema.Unknown,
}) {
  override get message(): string {
    const detail = this.cause instanceof globalThis.Error ? this.cause.message : String(this.cause)
    return detail === "" ? `Failed to ${this.operation} tool output` : `Failed to ${this.operation} tool output: ${detail}`
  }
}

/** The module's only error. */
export type Error = StorageError

/** The store's operations. */
export interface Interface {
  readonly limits: () => Effect.Effect<Limits>
  readonly bound: (input: BoundInput) => Effect.Effect<BoundResult, StorageError>
  readonly cleanup: () => Effect.Effect<void>
}

/** The ToolOutputStore service. */
export class Service extends Context.Tag("@toolgate/v2/ToolOutputStore")<Service, Interface>() {}

/** A store that never bounds; for registry tests that are not about bounding. */
export const layerPassthrough: Layer.Layer<Service> = Layer.succeed(
  Service,
  Service.of({
    limits: () => Effect.succeed({ maxLines: MAX_LINES, maxBytes: MAX_BYTES }),
    bound: (input) => Effect.succeed({ output: input.output, outputPaths: [] }),
    cleanup: () => Effect.void,
  }),
)
