/**
 * A model that replays a script of turns (text and tool calls), for tests and the demo. Each request takes the
 * next turn; when the script is exhausted the model answers with an empty finish. Every request is recorded.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Model from "./model.js"

/**
 * A scripted event; tool-call ids default to `call_<turn>_<index>`.
 *
 * @since 0.1.0
 * @category models
 */
export const ScriptEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("tool-call"),
    id: Schema.optional(Schema.String),
    name: Schema.String,
    input: Schema.Unknown,
    providerExecuted: Schema.optional(Schema.Boolean),
  }),
)
/**
 * @see ScriptEvent
 *
 * @since 0.1.0
 * @category models
 */
export type ScriptEvent = typeof ScriptEvent.Type

/**
 * A script: one array of events per provider turn.
 *
 * @since 0.1.0
 * @category models
 */
export const Script = Schema.Array(Schema.Array(ScriptEvent))
/**
 * @see Script
 *
 * @since 0.1.0
 * @category models
 */
export type Script = typeof Script.Type

/**
 * The script could not be read or decoded.
 *
 * @since 0.1.0
 * @category errors
 */
export class ScriptError extends Schema.TaggedError<ScriptError>()("ScriptedModel.ScriptError", {
  message: Schema.String,
}) {}

/**
 * Parses a script: a JSON array of turns, or JSONL with one turn (an array of events) per line.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parse = (text: string): Effect.Effect<Script, ScriptError> => {
  const trimmed = text.trim()
  const lines =
    trimmed.startsWith("[[") || trimmed.startsWith("[\n") || trimmed === "[]" ? [trimmed] : trimmed.split("\n")
  return Effect.try({
    try: () =>
      lines.length === 1
        ? JSON.parse(lines[0]!)
        : lines.filter((line) => line.trim() !== "").map((line) => JSON.parse(line)),
    catch: (error) => new ScriptError({ message: `Invalid script JSON: ${String(error)}` }),
  }).pipe(
    Effect.flatMap((value) => Schema.decodeUnknown(Script)(value)),
    Effect.mapError((error) => (error._tag === "ParseError" ? new ScriptError({ message: error.message }) : error)),
  )
}

/**
 * The requests the scripted model received, in order.
 *
 * @since 0.1.0
 * @category tags
 */
export class Requests extends Context.Tag("@toolgate/v2/ScriptedModel/Requests")<
  Requests,
  Ref.Ref<ReadonlyArray<Model.Request>>
>() {}

const toEvent = (turn: number, index: number, event: ScriptEvent): Model.Event =>
  event.type === "text"
    ? event
    : {
        type: "tool-call",
        id: event.id ?? `call_${turn}_${index}`,
        name: event.name,
        input: event.input,
        ...(event.providerExecuted === undefined ? {} : { providerExecuted: event.providerExecuted }),
      }

/**
 * Builds a scripted model and its request log.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (script: Script) =>
  Effect.gen(function* () {
    const requests = yield* Ref.make<ReadonlyArray<Model.Request>>([])
    const model = Model.Service.of({
      stream: (request) =>
        Stream.unwrap(
          Ref.modify(requests, (all) => [all.length, [...all, request]] as const).pipe(
            Effect.map((turn) => {
              const events = (script[turn] ?? []).map((event, index) => toEvent(turn, index, event))
              return Stream.fromIterable<Model.Event>([
                ...events,
                { type: "finish", reason: events.some((e) => e.type === "tool-call") ? "tool-calls" : "stop" },
              ])
            }),
          ),
        ),
    })
    return { model, requests }
  })

/**
 * Provides `Model.Service` replaying `script`, plus the request log.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: Script): Layer.Layer<Model.Service | Requests> =>
  Layer.effectContext(
    Effect.map(make(script), ({ model, requests }) =>
      Context.make(Model.Service, model).pipe(Context.add(Requests, requests)),
    ),
  )

/**
 * Like `layer`, reading the script from a JSON or JSONL file.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (path: string): Layer.Layer<Model.Service | Requests, ScriptError> =>
  Layer.unwrapEffect(
    Effect.try({
      try: () => fs.readFileSync(path, "utf8"),
      catch: (error) => new ScriptError({ message: `Cannot read script ${path}: ${String(error)}` }),
    }).pipe(Effect.flatMap(parse), Effect.map(layer)),
  )
