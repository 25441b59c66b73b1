/**
 * File search for the `glob` and `grep` tools. Two engines give the same rows in the same order: ripgrep when it
 * is configured or on `PATH`, otherwise a built-in Node engine. The engine is chosen once, when the process-wide
 * layer is built. Input neither engine can take (a NUL byte, a lone surrogate) is refused here for both alike. What
 * a search may touch and return — the confined root and the `read` rules on grep content — is in `confine.ts`
 * (see docs/trust/search.md).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Node from "./node.js"
import * as Ripgrep from "./ripgrep.js"
import * as Schema from "./schema.js"

export {
  /**
   * A search could not run, or its engine produced unusable output (tag `Search.Error`).
   *
   * @since 0.1.0
   */
  SearchError as Error,
  /**
   * A listed file.
   *
   * @since 0.1.0
   */
  Entry,
  /**
   * The input of `glob`.
   *
   * @since 0.1.0
   */
  type GlobInput,
  /**
   * The input of `grep`.
   *
   * @since 0.1.0
   */
  type GrepInput,
  /**
   * What an engine (and the service) offers.
   *
   * @since 0.1.0
   */
  type Interface,
  /**
   * A search input the operating system cannot take.
   *
   * @since 0.2.0
   */
  InvalidInputError,
  /**
   * Checks one search input.
   *
   * @since 0.2.0
   */
  invalidInput,
  /**
   * The grep pattern is not a valid regular expression for the engine.
   *
   * @since 0.1.0
   */
  InvalidPatternError,
  /**
   * One matching line.
   *
   * @since 0.1.0
   */
  Match,
  /**
   * Longest `Match.text`, in UTF-16 code units, before it is cut and `...` appended.
   *
   * @since 0.1.0
   */
  MAX_LINE_TEXT,
  /**
   * Longest JSON record (UTF-8 bytes) a grep match may produce.
   *
   * @since 0.1.0
   */
  MAX_RECORD_BYTES,
  /**
   * Submatches kept per line.
   *
   * @since 0.1.0
   */
  MAX_SUBMATCHES,
  /**
   * One matched span inside a line.
   *
   * @since 0.1.0
   */
  Submatch,
} from "./schema.js"
export {
  /**
   * The caller fields of a permission request (`PermissionV2.fromToolCall`).
   *
   * @since 0.2.0
   */
  type Caller,
  /**
   * Resolves the directory (or file) a search runs in.
   *
   * @since 0.2.0
   */
  confineRoot,
  /**
   * True for the failures of `confineRoot` that concern the path itself (not a permission or session failure).
   *
   * @since 0.2.0
   */
  isRootFailure,
  /**
   * What `readable` returns.
   *
   * @since 0.2.0
   */
  type Readable,
  /**
   * Holds grep matches to the `read` rules.
   *
   * @since 0.2.0
   */
  readable,
  /**
   * The `read` resource of an absolute file path.
   *
   * @since 0.2.0
   */
  readResource,
  /**
   * The failures of `confineRoot`.
   *
   * @since 0.2.0
   */
  type RootError,
  /**
   * The model-visible message for a failure of `confineRoot` other than a permission error.
   *
   * @since 0.2.0
   */
  rootFailureMessage,
  /**
   * Files whose grep matches were left out of a result, and why.
   *
   * @since 0.2.0
   */
  Withheld,
  /**
   * The sentence the model reads about withheld files, or `undefined` when none were.
   *
   * @since 0.2.0
   */
  withheldText,
} from "./confine.js"
export {
  /**
   * Compares two names by UTF-8 byte order (code point order).
   *
   * @since 0.1.0
   */
  compareNames,
  /**
   * Path order: component by component, each by UTF-8 byte order; a prefix sorts first.
   *
   * @since 0.1.0
   */
  comparePaths,
  /**
   * Strips leading `./` and slashes and turns `\` into `/`.
   *
   * @since 0.1.0
   */
  normalizePath,
} from "./order.js"
export {
  /**
   * The ripgrep arguments of a glob search.
   *
   * @since 0.1.0
   */
  globArgs,
  /**
   * The ripgrep arguments of a grep search.
   *
   * @since 0.1.0
   */
  grepArgs,
} from "./ripgrep.js"

/**
 * The Search service (process-wide).
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Search")<Service, Schema.Interface>() {}

/**
 * Which engine a layer chose.
 *
 * @since 0.1.0
 * @category models
 */
export type EngineKind = { readonly _tag: "ripgrep"; readonly rgPath: string } | { readonly _tag: "node" }

const firstInvalid = (
  checks: ReadonlyArray<readonly [Schema.InvalidInputError["field"], string | undefined]>,
): Schema.InvalidInputError | undefined => {
  for (const [field, value] of checks) {
    const invalid = value === undefined ? undefined : Schema.invalidInput(field, value)
    if (invalid !== undefined) return invalid
  }
  return undefined
}

// Inputs are checked here, for both engines alike, so that neither sees text the operating system cannot take.
const wrap = (engine: Schema.Interface): Schema.Interface =>
  Service.of({
    glob: Effect.fn("Search.glob")(function* (input: Schema.GlobInput) {
      const invalid = firstInvalid([
        ["pattern", input.pattern],
        ["path", input.cwd],
      ])
      if (invalid !== undefined) return yield* invalid
      return yield* engine.glob(input)
    }),
    grep: Effect.fn("Search.grep")(function* (input: Schema.GrepInput) {
      const invalid = firstInvalid([
        ["pattern", input.pattern],
        ["include", input.include],
        ["path", input.cwd],
        ["path", input.file],
      ])
      if (invalid !== undefined) return yield* invalid
      return yield* engine.grep(input)
    }),
  })

/**
 * Builds the service for one engine.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (kind: EngineKind): Schema.Interface =>
  wrap(kind._tag === "ripgrep" ? Ripgrep.make(kind.rgPath) : Node.make())

/**
 * The engine a layer picks: the configured `rgPath`, else `rg` on PATH when `rg --version` exits 0, else Node.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const detect = (options: { readonly rgPath?: string | undefined } = {}): Effect.Effect<EngineKind> =>
  Effect.gen(function* () {
    if (options.rgPath !== undefined) return { _tag: "ripgrep", rgPath: options.rgPath } as const
    return (yield* Ripgrep.available("rg")) ? ({ _tag: "ripgrep", rgPath: "rg" } as const) : ({ _tag: "node" } as const)
  })

/**
 * Chooses the engine once, on the first search: an explicit `rgPath`, else `rg` on PATH, else the Node engine.
 * Detection runs `rg --version`, so it waits for the first call rather than slow down every start.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: { readonly rgPath?: string | undefined }): Layer.Layer<Service> =>
  Layer.effect(
    Service,
    Effect.map(Effect.cached(Effect.map(detect(options), make)), (engine) =>
      Service.of({
        glob: (input) => Effect.flatMap(engine, (chosen) => chosen.glob(input)),
        grep: (input) => Effect.flatMap(engine, (chosen) => chosen.grep(input)),
      }),
    ),
  )

/**
 * `rg` on PATH when it runs, else the Node engine.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = layerWith({})

/**
 * Forces the ripgrep engine with the binary at `path`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRipgrep = (path: string): Layer.Layer<Service> =>
  Layer.sync(Service, () => make({ _tag: "ripgrep", rgPath: path }))

/**
 * Forces the built-in Node engine.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNode: Layer.Layer<Service> = Layer.sync(Service, () => make({ _tag: "node" }))
