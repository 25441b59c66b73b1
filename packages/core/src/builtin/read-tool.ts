/**
 * The `read` leaf: reads a text file (whole or by line pages), returns supported images as media, or lists a
 * directory page. Order: resolve → external_directory assert (external targets) → inspect → `read` assert →
 * resolve again (a path that no longer gives the approved target is refused) → act through a verified descriptor.
 * See docs/trust/check-at-use.md.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileFailure from "./internal/file-failure.js"
import * as Image from "../world/image.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as PermissionV2 from "../permission/permission.js"
import type * as SessionV2 from "../place/session.js"
import * as ReadToolFileSystem from "./read-tool-file-system.js"
import * as Tool from "../tool/tool.js"
import * as ToolOutputStore from "../tool/tool-output-store.js"
import * as Tools from "../tool/tools.js"

export {
  /**
   * The file is binary (or a PDF, or an unsupported media type).
   *
   * @since 0.1.0
   */
  BinaryFileError,
  /**
   * A `column` was given past the end of the line it names.
   *
   * @since 0.1.0
   */
  ColumnOutOfRangeError,
  /**
   * The text is not valid UTF-8.
   *
   * @since 0.1.0
   */
  MalformedUtf8Error,
  /**
   * An image is larger than `maximumBytes`.
   *
   * @since 0.1.0
   */
  MediaIngestLimitError,
  /**
   * A text page was requested past the last line.
   *
   * @since 0.1.0
   */
  OffsetOutOfRangeError,
  /**
   * The path is not of the kind the operation needs.
   *
   * @since 0.1.0
   */
  PathKindError,
} from "./read-tool-file-system.js"

/**
 * The registered tool name (also its permission action).
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "read"

/**
 * Image mimes returned to the model as media.
 *
 * @since 0.1.0
 * @category constants
 */
export const SUPPORTED_IMAGE_MIMES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
])

/**
 * What the model is told about `read`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DESCRIPTION =
  "Read one text file or supported image, read a large UTF-8 text file in pages by line offset, or list one page of a directory. Relative paths are taken from the current location; absolute paths inside it work too, and absolute paths outside it need external_directory approval."

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * The tool input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  path: Schema.String.annotations({ description: "Path of the file or directory to read" }),
  offset: Schema.optional(
    PositiveInt.annotations({ description: "Where to begin: the 1-based text line or directory entry number" }),
  ),
  limit: Schema.optional(
    PositiveInt.pipe(Schema.lessThanOrEqualTo(ReadToolFileSystem.MAX_READ_LINES)).annotations({
      description: "How many text lines or directory entries to return at most",
    }),
  ),
  column: Schema.optional(
    PositiveInt.annotations({
      description:
        "Where to begin within the line at offset: a 1-based character column, to read the rest of a truncated line",
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
 * The tool output: a whole file, a text page or a directory page.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Union(ReadToolFileSystem.Content, ReadToolFileSystem.TextPage, ReadToolFileSystem.ListPage)
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

type Failure =
  | ReadToolFileSystem.ReadError
  | ReadToolFileSystem.InspectError
  | Image.DecodeError
  | Image.SizeError
  | LocationMutation.PathError
  | LocationMutation.PathChangedError
  | PermissionV2.Error
  | SessionV2.NotFoundError

/**
 * The model-visible failure. Errors with their own text keep it; every other typed failure is the reference's
 * `Unable to read <path>` followed by its cause (not found, outside the Location, the operating system's refusal,
 * an I/O error with its code, a missing session; see `internal/file-failure.ts`).
 */
const toFailure = (input: Input, error: Failure): LLM.ToolFailure => {
  switch (error._tag) {
    case "PermissionV2.BlockedError":
    case "PermissionV2.CorrectedError":
    case "Approvals.TimedOutError":
      return PermissionV2.toToolFailure(error)
    case "ReadTool.BinaryFileError":
    case "ReadTool.ColumnOutOfRangeError":
    case "ReadTool.MediaIngestLimitError":
    case "Image.DecodeError":
    case "Image.SizeError":
      return new LLM.ToolFailure({ message: error.message, error })
    case "FileMutation.PathChangedError":
      return new LLM.ToolFailure({
        message: `Unable to read ${input.path}: it changed after it was checked; nothing was read`,
        error,
      })
    default:
      return new LLM.ToolFailure({ message: FileFailure.describe(`Unable to read ${input.path}`, error), error })
  }
}

/**
 * Builds the `read` tool from the Location's services (captured now; the tool value holds no requirements).
 *
 * @since 0.1.0
 * @category utilities
 */
export const tool = Effect.gen(function* () {
  const mutation = yield* LocationMutation.Service
  const files = yield* ReadToolFileSystem.Service
  const permission = yield* PermissionV2.Service
  const image = yield* Image.Service
  // Pages are sized to the output limits so the output store never has to cut one.
  const store = yield* Effect.serviceOption(ToolOutputStore.Service)
  const limits: Effect.Effect<ReadToolFileSystem.Limits> = Option.match(store, {
    onNone: () => Effect.succeed(ReadToolFileSystem.DEFAULT_LIMITS),
    onSome: (service) => service.limits(),
  })

  const execute = (input: Input, context: Tool.Context): Effect.Effect<Output, LLM.ToolFailure> => {
    const identity = PermissionV2.fromToolCall(context)
    return Effect.gen(function* () {
      const page: ReadToolFileSystem.Page = {
        offset: input.offset,
        limit: input.limit,
        ...(input.column === undefined ? {} : { column: input.column }),
        limits: yield* limits,
      }
      const target = yield* mutation.resolve({ path: input.path, kind: "directory" })
      if (target.externalDirectory !== undefined) {
        yield* permission.assert({
          ...LocationMutation.externalDirectoryPermission(target.externalDirectory),
          ...identity,
        })
      }
      const kind = yield* files.inspect(target.canonical)
      yield* permission.assert({ action: name, resources: [target.resource], save: ["*"], ...identity })
      // An ask can take minutes: the approved target must still be what the path names now.
      yield* mutation.recheck({ path: input.path, kind: "directory" }, target)
      if (kind === "directory") return yield* files.list(target.canonical, page)
      const result = yield* files.read(target.canonical, target.resource, page)
      if (!("encoding" in result) || result.encoding !== "base64") return result
      if (!SUPPORTED_IMAGE_MIMES.has(result.mime)) {
        return yield* new ReadToolFileSystem.BinaryFileError({ resource: target.resource })
      }
      return yield* image
        .normalize(target.resource, result)
        .pipe(Effect.catchTag("Image.ResizerUnavailableError", () => Effect.succeed(result)))
    }).pipe(Effect.mapError((error) => toFailure(input, error)))
  }

  return Tool.make({
    description: DESCRIPTION,
    annotations: { title: "Read file or directory", readOnlyHint: true, openWorldHint: false },
    input: Input,
    output: Output,
    execute,
    toModelOutput: ({ input, output }) => {
      if ("entries" in output) return [{ type: "text", text: ReadToolFileSystem.renderListPage(output, input.offset) }]
      if ("type" in output) return [{ type: "text", text: ReadToolFileSystem.renderTextPage(output) }]
      if (output.encoding === "utf8") return [{ type: "text", text: ReadToolFileSystem.renderContent(output.content) }]
      if (!SUPPORTED_IMAGE_MIMES.has(output.mime)) return []
      return [
        { type: "text", text: "Image read successfully" },
        { type: "file", data: output.content, mime: output.mime, name: input.path },
      ]
    },
  })
})

/**
 * Registers `{ read }` in the Location until its scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tools.layer(name, tool)
