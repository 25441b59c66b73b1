/**
 * File search for the `glob` and `grep` tools. Two engines give the same rows in the same order: ripgrep when it
 * is configured or on `PATH`, otherwise a built-in Node engine. The engine is chosen once, when the process-wide
 * layer is built. Input neither engine can take (a NUL byte, a lone surrogate) is refused here for both alike. What
 * a search may touch and return — the confined root and the `read` rules on grep content — is in `confine.ts`
 * (see docs/trust/search.md).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import * as Node from "./node.js"
import * as Ripgrep from "./ripgrep.js"
import * as Schema from "./schema.js"

export {
  /** A search could not run, or its engine produced unusable output (tag `Search.Error`). */
  SearchError as Error,
  Entry,
  type GlobInput,
  type GrepInput,
  type Interface,
  InvalidInputError,
  invalidInput,
  InvalidPatternError,
  Match,
  MAX_LINE_TEXT,
  MAX_RECORD_BYTES,
  MAX_SUBMATCHES,
  Submatch,
} from "./schema.js"
export {
  type Caller,
  confineRoot,
  isRootFailure,
  type Readable,
  readable,
  readResource,
  RootChangedError,
  type RootError,
  rootFailureMessage,
  Withheld,
  withheldText,
} from "./confine.js"
export { compareNames, comparePaths, normalizePath } from "./order.js"
export { globArgs, grepArgs } from "./ripgrep.js"

/** The Search service (process-wide). */
export class Service extends Context.Tag("@toolgate/v2/Search")<Service, Schema.Interface>() {}

/** Which engine a layer chose. */
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

/** Builds the service for one engine. */
export const make = (kind: EngineKind): Schema.Interface =>
  wrap(kind._tag === "ripgrep" ? Ripgrep.make(kind.rgPath) : Node.make())

/** The engine a layer picks: the configured `rgPath`, else `rg` on PATH when `rg --version` exits 0, else Node. */
export const detect = (options: { readonly rgPath?: string | undefined } = {}): Effect.Effect<EngineKind> =>
  Effect.gen(function* () {
    if (options.rgPath !== undefined) return { _tag: "ripgrep", rgPath: options.rgPath } as const
    return (yield* Ripgrep.available("rg")) ? ({ _tag: "ripgrep", rgPath: "rg" } as const) : ({ _tag: "node" } as const)
  })

/**
 * Chooses the engine once, on the first search: an explicit `rgPath`, else `rg` on PATH, else the Node engine.
 * Detection runs `rg --version`, so it waits for the first call rather than slow down every start.
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

/** `rg` on PATH when it runs, else the Node engine. */
export const layer: Layer.Layer<Service> = layerWith({})

/** Forces the ripgrep engine with the binary at `path`. */
export const layerRipgrep = (path: string): Layer.Layer<Service> =>
  Layer.sync(Service, () => make({ _tag: "ripgrep", rgPath: path }))

/** Forces the built-in Node engine. */
export const layerNode: Layer.Layer<Service> = Layer.sync(Service, () => make({ _tag: "node" }))
