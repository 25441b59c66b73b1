/**
 * The single model-output bounding boundary. The registry calls `bound` exactly once per successful settlement;
 * within limits the output passes through untouched, over a limit the full text is kept in a managed file and the
 * model receives a head+tail preview naming it. Managed files are kept per project,
 * `<data>/tool-output/<project key>/tool_…`, so one project's output is not another's to read (see
 * docs/trust/managed-output.md).
 *
 * `bound` runs once per tool call, so it is untraced (a span costs more than bounding an output within the limits);
 * only an over-limit spill, which writes a file, is traced as `ToolOutputStore.spill`.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Config from "../place/config.js"
import * as Location from "../place/location.js"
import * as ProjectV2 from "../place/project.js"
import * as Global from "../system/global.js"
import * as Identifier from "../values/identifier.js"
import type * as LLM from "../values/llm.js"
import * as Captures from "./internal/output-capture.js"
import { writeChunked } from "./internal/output-spill.js"
import { boundedPreview, marker, withinLimits } from "./internal/output-text.js"

export {
  /**
   * The model-facing preview of an over-limit text: head, a blank line, the marker, a blank line, tail, within
   * `maxLines` lines and `maxBytes` bytes.
   *
   * @since 0.1.0
   */
  boundedPreview,
  /**
   * The marker line naming the managed file that holds the full output.
   *
   * @since 0.1.0
   */
  marker,
  /**
   * The head and tail of an over-limit text within a line and byte budget.
   *
   * @since 0.1.0
   */
  preview,
  /**
   * Whether `text` is within `maxLines` lines and `maxBytes` UTF-8 bytes.
   *
   * @since 0.1.0
   */
  withinLimits,
} from "./internal/output-text.js"

/**
 * Default line limit.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINES = 2000
/**
 * Default byte limit (50 KiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BYTES = 50 * 1024
/**
 * How long managed files are kept.
 *
 * @since 0.1.0
 * @category constants
 */
export const RETENTION = Duration.days(7)
/**
 * The managed directory under the data directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const MANAGED_DIRECTORY = "tool-output"
/**
 * The folder under the managed directory for a store built without a Location (no project to file it under); no
 * default rule allows reading it.
 *
 * @since 0.2.0
 * @category constants
 */
export const UNSCOPED_FOLDER = "unscoped"

/**
 * What `bound` receives.
 *
 * @since 0.1.0
 * @category models
 */
export interface BoundInput {
  readonly sessionID: string
  readonly toolCallID: string
  readonly output: LLM.ToolOutput
}

/**
 * What `bound` returns; `outputPaths` lists the managed file when the output was cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface BoundResult {
  readonly output: LLM.ToolOutput
  readonly outputPaths: ReadonlyArray<string>
}

/**
 * The effective limits.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly maxLines: number
  readonly maxBytes: number
}

/**
 * Keeping the complete output failed, so the settlement fails instead of producing a lossy success.
 *
 * @since 0.1.0
 * @category errors
 */
export class StorageError extends Schema.TaggedError<StorageError>()("ToolOutputStore.StorageError", {
  operation: Schema.Literal("encode", "write"),
  cause: Schema.Unknown,
}) {
  override get message(): string {
    // A platform error's own text names a descriptor number and its reason tag; the system error it wraps says what
    // happened (`ENOSPC: no space left on device, write`).
    const cause = this.cause as { readonly _tag?: unknown; readonly cause?: unknown } | null | undefined
    const system = cause?._tag === "SystemError" && cause.cause instanceof globalThis.Error ? cause.cause : undefined
    const detail =
      system !== undefined
        ? system.message
        : this.cause instanceof globalThis.Error
          ? this.cause.message
          : String(this.cause)
    return detail === ""
      ? `Failed to ${this.operation} tool output`
      : `Failed to ${this.operation} tool output: ${detail}`
  }
}

/**
 * The module's only error.
 *
 * @since 0.1.0
 * @category errors
 */
export type Error = StorageError

/**
 * A managed file a producer streams its complete output into while it runs. The file is created on the first
 * `write`; `path` is `undefined` for a store that keeps nothing (the passthrough store).
 *
 * @since 0.2.0
 * @category models
 */
export interface Capture {
  readonly path: string | undefined
  /**
   * Appends `chunk` synchronously: nothing is buffered in memory. Throws when the file cannot be written; the
   * partial file is then removed (a full disk is not kept full by it) and every later `write` throws too.
   */
  readonly write: (chunk: Uint8Array) => void
  /** True while the file exists: something was written and no write failed. */
  readonly written: () => boolean
  /**
   * Declares that the file holds the complete output of the call: whatever an over-limit `bound` of that call cuts
   * from the model's text is in it. `bound` then names this file in its marker instead of writing a second copy.
   *
   * @since 0.3.0
   */
  readonly complete: () => void
}

/**
 * The store's operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly limits: () => Effect.Effect<Limits>
  /** Untraced: it runs once per tool call (an over-limit spill is traced as `ToolOutputStore.spill`). */
  readonly bound: (input: BoundInput) => Effect.Effect<BoundResult, StorageError>
  readonly cleanup: () => Effect.Effect<void>
  /**
   * A managed file for the complete output of one call (a producer such as bash, whose output may exceed what it
   * holds in memory). Once written, the file is listed in that call's settlement `outputPaths` by `bound`. The file
   * is closed when the scope closes; a scope that closes with a failure or an interruption removes it (nobody
   * could be told its name).
   *
   * @since 0.2.0
   */
  readonly capture: (input: {
    readonly sessionID: string
    readonly toolCallID: string
  }) => Effect.Effect<Capture, never, Scope.Scope>
}

/**
 * The ToolOutputStore service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ToolOutputStore")<Service, Interface>() {}

/**
 * A `capture` that keeps nothing (`path` undefined): for stores that do not retain output.
 *
 * @since 0.2.0
 * @category utilities
 */
export const captureNothing: Interface["capture"] = () =>
  Effect.succeed({ path: undefined, write: () => {}, written: () => false, complete: () => {} })

/**
 * A store that never bounds; for registry tests that are not about bounding.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPassthrough: Layer.Layer<Service> = Layer.succeed(
  Service,
  Service.of({
    limits: () => Effect.succeed({ maxLines: MAX_LINES, maxBytes: MAX_BYTES }),
    bound: (input) => Effect.succeed({ output: input.output, outputPaths: [] }),
    cleanup: () => Effect.void,
    capture: captureNothing,
  }),
)

// ---------------------------------------------------------------------------------------------------------------
// Measurement and preview. Texts may be hundreds of megabytes: nothing here splits a text into an array of lines or
// code points, and cuts are made by scanning only as far as the budget requires.

/** The text the model reads: the text parts joined, or the pretty JSON of `structured` when content is empty. */
const contextualText = (output: LLM.ToolOutput): string | StorageError => {
  if (output.content.length === 0) {
    try {
      return JSON.stringify(output.structured, null, 2) ?? String(output.structured)
    } catch (cause) {
      return new StorageError({ operation: "encode", cause })
    }
  }
  // A lone text part is measured and written as is, never copied.
  const content = output.content
  if (content.length === 1 && content[0]!.type === "text") return content[0]!.text
  const texts = content.filter((part): part is LLM.ToolTextContent => part.type === "text")
  if (texts.length === 1) return texts[0]!.text
  let text = ""
  for (const part of texts) text += part.text
  return text
}

const defaults: Limits = { maxLines: MAX_LINES, maxBytes: MAX_BYTES }

/**
 * The managed folder key of a Location: `Project.storageKey` of its project and directory.
 *
 * @since 0.2.0
 * @category utilities
 */
export const folderOf = (location: Location.Interface): string =>
  ProjectV2.storageKey(location.project.id, location.directory)

/**
 * Builds a store whose managed files go to `<data>/tool-output/<folder>` (default `UNSCOPED_FOLDER`); without
 * `config` the limits are always the defaults. `cleanup` covers every folder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: Option.Option<Config.Interface>,
  folder: string = UNSCOPED_FOLDER,
): Effect.Effect<Interface, never, FileSystem.FileSystem | Global.Service> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = Global.toolOutput(yield* Global.Service)
    const directory = path.join(root, folder)

    const limitsOf = (entries: ReadonlyArray<Config.Entry>): Limits => {
      const merged: { max_lines?: number | undefined; max_bytes?: number | undefined } = {}
      for (const document of Config.documents(entries)) Object.assign(merged, document.info.tool_output ?? {})
      return { maxLines: merged.max_lines ?? MAX_LINES, maxBytes: merged.max_bytes ?? MAX_BYTES }
    }

    const readLimits: Effect.Effect<Limits> = Option.match(config, {
      onNone: () => Effect.succeed(defaults),
      onSome: (service) =>
        Effect.map(
          Effect.suspend(() => service.entries()),
          limitsOf,
        ),
    })

    const limits = Effect.fn("ToolOutputStore.limits")(function* () {
      return yield* readLimits
    })

    const retain = (text: string) =>
      Effect.gen(function* () {
        const file = path.join(directory, `tool_${Identifier.ascending()}`)
        yield* fs.makeDirectory(directory, { recursive: true })
        yield* writeChunked(fs, file, text)
        return file
      }).pipe(Effect.mapError((cause) => new StorageError({ operation: "write", cause })))

    // The per-settlement path: untraced, and within limits no Effect but the result. A config read that is already
    // settled (`Effect.succeed`, as every Config layer gives) is used in place instead of through a flatMap.
    const boundUntraced = (input: BoundInput, kept?: string): Effect.Effect<BoundResult, StorageError> => {
      if (Option.isNone(config)) return boundWith(input, defaults, kept)
      const entries = config.value.entries()
      return Exit.isExit(entries) && Exit.isSuccess(entries)
        ? boundWith(input, limitsOf((entries as Exit.Success<ReadonlyArray<Config.Entry>, never>).value), kept)
        : Effect.flatMap(entries, (entries) => boundWith(input, limitsOf(entries), kept))
    }

    const boundWith = (input: BoundInput, limits: Limits, kept?: string): Effect.Effect<BoundResult, StorageError> => {
      const text = contextualText(input.output)
      if (typeof text !== "string") return Effect.fail(text)
      if (withinLimits(text, limits.maxLines, limits.maxBytes))
        return Effect.succeed({ output: input.output, outputPaths: [] } satisfies BoundResult)
      return spill(input, text, limits, kept)
    }

    // Over a limit: keep the complete text and build the preview. The only traced step of a settlement. A capture
    // its producer declared complete already keeps everything the preview leaves out, and is named instead.
    const spill = Effect.fn("ToolOutputStore.spill")(function* (
      input: BoundInput,
      text: string,
      limits: Limits,
      kept?: string,
    ) {
      const { maxLines, maxBytes } = limits
      const file = kept ?? (yield* retain(text))
      const content: Array<LLM.ToolContent> = [
        { type: "text", text: boundedPreview(text, marker(file), maxLines, maxBytes) },
      ]
      for (const part of input.output.content) if (part.type === "file") content.push(part)
      return {
        output: { structured: input.output.structured, content },
        outputPaths: kept === undefined ? [file] : [],
      } satisfies BoundResult
    })

    /** Removes the expired `tool_*` files of `folder`; with `descend`, also of each project folder in it. */
    const sweep = (folder: string, cutoff: number, descend: boolean): Effect.Effect<void> =>
      Effect.gen(function* () {
        const names = yield* fs.readDirectory(folder).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
        for (const name of names) {
          const file = path.join(folder, name)
          const info = yield* Effect.option(fs.stat(file))
          if (Option.isNone(info)) continue
          if (info.value.type === "Directory") {
            if (descend) yield* sweep(file, cutoff, false)
            continue
          }
          if (!name.startsWith("tool_")) continue
          const modified = Option.match(info.value.mtime, { onNone: () => 0, onSome: (date) => date.getTime() })
          if (modified < cutoff) yield* Effect.ignore(fs.remove(file))
        }
      })

    const cleanup = Effect.fn("ToolOutputStore.cleanup")(function* () {
      const cutoff = (yield* Clock.currentTimeMillis) - Duration.toMillis(RETENTION)
      // files directly under the root were written before output was kept per project
      yield* sweep(root, cutoff, true)
    })

    const { capture, take } = Captures.make(directory)

    // Within limits and with nothing captured, the very result of `bound` is returned (the hot path is untouched).
    const boundWithCaptures = (input: BoundInput): Effect.Effect<BoundResult, StorageError> => {
      const entry = take(input.sessionID, input.toolCallID)
      if (entry === undefined) return boundUntraced(input)
      const files = entry.files
      return Effect.map(boundUntraced(input, entry.complete), (result) =>
        files.length === 0 ? result : { ...result, outputPaths: [...files, ...result.outputPaths] },
      )
    }

    return Service.of({ limits, bound: boundWithCaptures, cleanup, capture })
  })

/** The Location's folder when a Location is in context, else `UNSCOPED_FOLDER`. */
const contextFolder = Effect.map(Effect.serviceOption(Location.Service), (location) =>
  Option.match(location, { onNone: () => UNSCOPED_FOLDER, onSome: folderOf }),
)

/**
 * The Location store with limits from `Config` (re-read on every call), filing managed output under the Location's
 * project folder (`UNSCOPED_FOLDER` when no Location is in context).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem | Global.Service | Config.Service> = Layer.effect(
  Service,
  Effect.flatMap(Config.Service, (config) =>
    Effect.flatMap(contextFolder, (folder) => make(Option.some(config), folder)),
  ),
)

/**
 * The Location store with the default limits (same folder rule as `layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutConfig: Layer.Layer<Service, never, FileSystem.FileSystem | Global.Service> = Layer.effect(
  Service,
  Effect.flatMap(contextFolder, (folder) => make(Option.none(), folder)),
)

/**
 * The process-wide retention job: `cleanup()` now, then every hour, in a fiber owned by the layer's scope. Build it
 * once per process, not once per Location.
 *
 * @since 0.1.0
 * @category layers
 */
export const cleanupLayer: Layer.Layer<never, never, FileSystem.FileSystem | Global.Service> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const store = yield* make(Option.none())
    yield* Effect.forkScoped(Effect.repeat(store.cleanup(), Schedule.spaced("1 hour")))
  }),
)
