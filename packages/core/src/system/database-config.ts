/**
 * Which database a process opens, from its environment and the user's configuration file. The database is
 * process-wide while configuration is per Location, so the `database` section is read from one place only: the
 * `toolgate.json(c)` of the user's configuration directory (`Global.config`, `$XDG_CONFIG_HOME/toolgate`), once,
 * when `Database.layer` is built. `TOOLGATE_DATABASE_URL` wins over `database.url`; `database.pool` sets the
 * Postgres pool whichever of the two named the URL. A project's configuration may not hold a `database` section
 * (`Config` rejects it): a repository must not choose where a runner keeps its approvals. See docs/database.md.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as jsonc from "jsonc-parser"
import * as Path from "../values/path.js"
import type * as Global from "./global.js"
import type { PoolOptions } from "./internal/database-postgres.js"

/** The largest delay Node's timers take (a longer one fires at once), so the largest timeout accepted. */
const MAX_TIMEOUT_MS = 2_147_483_647

const PositiveInt = Schema.Int.pipe(Schema.positive())

const Milliseconds = PositiveInt.pipe(
  Schema.lessThanOrEqualTo(MAX_TIMEOUT_MS, { message: () => `at most ${MAX_TIMEOUT_MS} milliseconds` }),
)

/**
 * A Postgres connection URL: `postgres://` or `postgresql://`. The message of a rejected one never repeats it (it
 * may hold a password).
 */
const Url = Schema.String.pipe(
  Schema.filter(
    (url) => {
      if (!/^postgres(ql)?:\/\//i.test(url)) return false
      try {
        return new URL(url).host !== "" || new URL(url).searchParams.has("host")
      } catch {
        return false
      }
    },
    { message: () => "expected a postgres://user:password@host:port/database URL (the value is not shown)" },
  ),
)

/**
 * `database.pool`: the Postgres pool of each process (SQLite has one connection and ignores it).
 * `max_connections` (default 10), `connect_timeout_ms` (how long to wait for a connection, also at start; default
 * 10000) and `idle_timeout_ms` (how long an idle connection is kept; default 30000). An unknown key is an error.
 *
 * @since 0.3.0
 * @category models
 */
export const Pool = Schema.Struct({
  max_connections: Schema.optionalWith(PositiveInt, { exact: true }),
  connect_timeout_ms: Schema.optionalWith(Milliseconds, { exact: true }),
  idle_timeout_ms: Schema.optionalWith(Milliseconds, { exact: true }),
}).annotations({
  description: "The Postgres pool of each process",
  message: () => "expected an object { max_connections?, connect_timeout_ms?, idle_timeout_ms? }",
  parseOptions: { onExcessProperty: "error" },
})

/**
 * The `database` section of the user's configuration file: `url` (a Postgres URL; `TOOLGATE_DATABASE_URL` wins
 * over it; absent: SQLite at `<data>/toolgate.db`) and `pool`. An unknown key is an error.
 *
 * @since 0.3.0
 * @category models
 */
export const Section = Schema.Struct({
  url: Schema.optionalWith(Url, { exact: true }),
  pool: Schema.optionalWith(Pool, { exact: true }),
}).annotations({
  description: "The database of the process (read only from the user's configuration directory)",
  // Never the value: a section written as a bare URL string would otherwise be repeated with its password.
  message: () => "expected an object { url?, pool? }",
  parseOptions: { onExcessProperty: "error" },
})
/**
 * @see Section
 *
 * @since 0.3.0
 * @category models
 */
export type Section = typeof Section.Type

/**
 * The `database` section of the user's configuration file is not valid (or the file does not parse). `message` is
 * one line naming the file and the field, like `Config.InvalidError`'s; it never shows a URL.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidError extends Schema.TaggedError<InvalidError>()("DatabaseConfig.InvalidError", {
  path: Schema.String,
  message: Schema.String,
}) {}

/**
 * The database a process opens: `url` (Postgres; `undefined`: SQLite), the pool, and where the URL came from
 * (`TOOLGATE_DATABASE_URL`, or the file whose `database.url` named it; `undefined` for SQLite).
 *
 * @since 0.3.0
 * @category models
 */
export interface Choice {
  readonly url: string | undefined
  readonly pool: PoolOptions
  readonly source: string | undefined
}

/**
 * The files read, in priority order (the later wins), the same names `Config` discovers.
 *
 * @since 0.3.0
 * @category constants
 */
export const FILE_NAMES: ReadonlyArray<string> = ["toolgate.json", "toolgate.jsonc"]

const lineAndColumn = (text: string, offset: number): string => {
  const before = text.slice(0, offset).split("\n")
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`
}

const fieldPath = (segments: ReadonlyArray<PropertyKey>): string =>
  ["database", ...segments.map((segment) => String(segment))].join(".")

/** The real path of `file` when it resolves inside `root`; `undefined` when it is missing or leads outside. */
const confined = (file: string, root: string): string | undefined => {
  let real: string
  try {
    real = fs.realpathSync(file)
  } catch {
    return undefined
  }
  let realRoot: string
  try {
    realRoot = fs.realpathSync(root)
  } catch {
    realRoot = path.resolve(root)
  }
  return Path.isWithin(realRoot, real) && fs.statSync(real).isFile() ? real : undefined
}

/**
 * The `database` section of one configuration file's text: `undefined` when the file has none.
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseSection = (file: string, text: string): Either.Either<Section | undefined, InvalidError> => {
  const errors: Array<jsonc.ParseError> = []
  const value: unknown = jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const syntax = errors[0]
  if (syntax !== undefined) {
    return Either.left(
      new InvalidError({
        path: file,
        message: `Invalid JSONC in ${file} at ${lineAndColumn(text, syntax.offset)} (offset ${syntax.offset}): ${jsonc.printParseErrorCode(syntax.error)}`,
      }),
    )
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || !("database" in value)) {
    return Either.right(undefined)
  }
  return Schema.decodeUnknownEither(Section)((value as { readonly database: unknown }).database, {
    errors: "all",
  }).pipe(
    Either.mapLeft(
      (error) =>
        new InvalidError({
          path: file,
          message: `Invalid config in ${file} at ${ParseResult.ArrayFormatter.formatIssueSync(error.issue)
            .map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
            .join("; ")}`,
        }),
    ),
  )
}

/**
 * The `database` section of the user's configuration directory (`global.config`): the section of the last of
 * `toolgate.json`, `toolgate.jsonc` that has one (the whole section, as `Config.latest` reads a key). A file that
 * resolves outside the directory is skipped, as `Config`'s discovery skips it; one that cannot be read, parsed or
 * decoded fails with `InvalidError`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const read = (
  global: Global.Interface,
): Effect.Effect<{ readonly section: Section; readonly file: string } | undefined, InvalidError> =>
  Effect.suspend(() => {
    const directory = path.resolve(global.config)
    let found: { readonly section: Section; readonly file: string } | undefined
    for (const name of FILE_NAMES) {
      const file = path.join(directory, name)
      const real = confined(file, directory)
      if (real === undefined) continue
      let text: string
      try {
        text = fs.readFileSync(real, "utf8")
      } catch (error) {
        return Effect.fail(
          new InvalidError({
            path: file,
            message: `Unable to read ${file}: ${error instanceof Error ? error.message : String(error)}`,
          }),
        )
      }
      const parsed = parseSection(file, text)
      if (Either.isLeft(parsed)) return Effect.fail(parsed.left)
      if (parsed.right !== undefined) found = { section: parsed.right, file }
    }
    return Effect.succeed(found)
  })

/** `database.pool` as the Postgres client's options. */
const poolOptions = (pool: Section["pool"]): PoolOptions => ({
  ...(pool?.max_connections === undefined ? {} : { maxConnections: pool.max_connections }),
  ...(pool?.connect_timeout_ms === undefined ? {} : { connectTimeout: pool.connect_timeout_ms }),
  ...(pool?.idle_timeout_ms === undefined ? {} : { idleTimeout: pool.idle_timeout_ms }),
})

/**
 * The database a process opens: `environmentUrl` (what `TOOLGATE_DATABASE_URL` holds, see
 * `Database.urlFromEnvironment`) when given, otherwise `database.url` of the user's configuration file, otherwise
 * SQLite; the pool from `database.pool`. Fails with `InvalidError` when the file's section is invalid, even when
 * the variable names the URL: bad configuration fails closed.
 *
 * @since 0.3.0
 * @category utilities
 */
export const resolve = (
  global: Global.Interface,
  environmentUrl: string | undefined,
): Effect.Effect<Choice, InvalidError> =>
  Effect.map(read(global), (found) => {
    const pool = poolOptions(found?.section.pool)
    if (environmentUrl !== undefined) return { url: environmentUrl, pool, source: "TOOLGATE_DATABASE_URL" }
    const url = found?.section.url
    return url === undefined ? { url: undefined, pool, source: undefined } : { url, pool, source: found!.file }
  })

/**
 * `resolve` for `Database.layer`: an invalid section is a defect carrying the `InvalidError` (the process cannot
 * start on a database it was not told to use), printed by the CLIs as its one line.
 *
 * @since 0.3.0
 * @category utilities
 */
export const choose = (global: Global.Interface, environmentUrl: string | undefined): Effect.Effect<Choice> =>
  Effect.orDie(resolve(global, environmentUrl))
