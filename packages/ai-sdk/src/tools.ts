/**
 * A toolgate materialization as a Vercel AI SDK `ToolSet`. Every tool advertises our JSON Schema through
 * `jsonSchema()` (the SDK does not validate it: our codec does, at settle) and its `execute` settles through
 * `materialization.settle` on the caller's Effect runtime, so validation, permissions and output bounding stay ours.
 * A permission ask keeps `execute` pending until a client replies.
 *
 * @since 0.1.0
 */
import { Runner, Tool, type LLM, type ToolRegistry } from "@toolgate/core"
import { jsonSchema, type JSONSchema7, type StopCondition, tool, type ToolSet } from "ai"
import { Cause, Effect, Exit, ManagedRuntime, Runtime } from "effect"

/** Who settles: the session, agent and assistant message the calls belong to. */
export interface Identity {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
}

/** Where `execute` runs the settlement: a `Runtime` or a `ManagedRuntime` (default: `Runtime.defaultRuntime`). */
export type EffectRuntime = Runtime.Runtime<never> | ManagedRuntime.ManagedRuntime<never, unknown>

/**
 * Thrown by `execute` for a model-visible error result. The SDK sends the model `String(error)`, so `toString` is
 * the bare message: the model reads exactly the text our tool produced.
 */
export class ToolError extends Error {
  override readonly name: string = "ToolgateToolError"
  override toString(): string {
    return this.message
  }
}

/**
 * Thrown by `execute` when the user declined a permission or dismissed a question. The SDK records it as a tool
 * error; pass `stoppedByUser` in `stopWhen` so no further step runs.
 */
export class UserStopError extends ToolError {
  override readonly name: string = "ToolgateUserStopError"
  constructor() {
    super("The user declined this tool call and stopped the run")
  }
}

/** A stop condition that ends the loop after a step in which any tool call was stopped by the user. */
export const stoppedByUser: StopCondition<ToolSet> = ({ steps }) =>
  steps.at(-1)?.content.some((part) => part.type === "tool-error" && part.error instanceof UserStopError) ?? false

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

const runExit = <A, E>(runtime: EffectRuntime, effect: Effect.Effect<A, E>, signal: AbortSignal | undefined) => {
  const options = signal === undefined ? undefined : { signal }
  return ManagedRuntime.isManagedRuntime(runtime)
    ? runtime.runPromiseExit(effect, options)
    : Runtime.runPromiseExit(runtime as Runtime.Runtime<never>)(effect, options)
}

const messageOf = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

/**
 * Settles one call and translates the outcome for the SDK: a success returns our result value, a model-visible
 * error throws a `ToolError` carrying its message (the SDK turns it into a tool error the model sees), a user stop
 * throws `UserStopError`, an interruption (the SDK's abort signal) throws with the Runner's interruption text.
 */
const execute =
  (materialization: ToolRegistry.Materialization, identity: Identity, runtime: EffectRuntime, name: string) =>
  async (input: unknown, options: { readonly toolCallId: string; readonly abortSignal?: AbortSignal | undefined }) => {
    const exit = await runExit(
      runtime,
      materialization.settle({ ...identity, call: { id: options.toolCallId, name, input } }),
      options.abortSignal,
    )
    if (Exit.isSuccess(exit)) {
      const { result } = exit.value
      if (result.type === "error") throw new ToolError(messageOf(result.value))
      return result
    }
    if (Tool.isUserStop(exit.cause)) throw new UserStopError()
    if (Cause.isInterruptedOnly(exit.cause)) throw new ToolError(Runner.INTERRUPTED)
    const failure = Cause.squash(exit.cause)
    throw new ToolError(`Tool execution failed: ${failure instanceof Error ? failure.message : messageOf(failure)}`)
  }

/** Converts `materialization` into an AI SDK `ToolSet` whose calls settle under `identity` on `runtime`. */
export const toAiSdkTools = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  runtime: EffectRuntime = Runtime.defaultRuntime,
): ToolSet =>
  Object.fromEntries(
    materialization.definitions.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema<unknown>(definition.inputSchema as JSONSchema7),
        execute: execute(materialization, identity, runtime, definition.name),
        toModelOutput: ({ output }) => toModelOutput(output) as never,
      }),
    ]),
  )
