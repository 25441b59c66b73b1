/**
 * The storage engines the service suites run on: SQLite (a private in-memory database per layer) and Postgres (a
 * private schema on the run's throwaway server, see postgres-setup.ts). A suite takes the engine as a parameter:
 *
 *   describe.each(Engines.all)("X on $name", (engine) => { … Effect.provide(engine.layer()) … })
 *
 * so the same tests run on both. Without a Postgres server the Postgres engine's `skip` says why, and
 * `Engines.describeEach` skips its half under a name that carries the reason.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { describe, inject } from "vitest"
import { Database } from "../../src/index.js"

/** One engine. */
export interface Engine {
  readonly name: "sqlite" | "postgres"
  /** Why this engine's tests are skipped; `undefined` when they run. */
  readonly skip: string | undefined
  /** A fresh, migrated, private database per build. */
  readonly layer: () => Layer.Layer<Database.Client>
  /**
   * A fresh private database other processes can open too: `url` is what a child passes to `Database.layerUrl`
   * (Postgres) or the file it opens with `Database.layerFile` (SQLite, under `directory`).
   */
  readonly shared: (directory: string) => Effect.Effect<string>
}

const postgresContext = (): { readonly url: string } | { readonly reason: string } => {
  try {
    return inject("toolgatePostgres") ?? { reason: "no globalSetup provided a Postgres server" }
  } catch {
    const url = process.env.TOOLGATE_TEST_DATABASE_URL
    return url === undefined || url === "" ? { reason: "TOOLGATE_TEST_DATABASE_URL is not set" } : { url }
  }
}

let schemas = 0

/** `url` with `search_path` set to `schema` for every connection of a pool. */
const withSchema = (url: string, schema: string): string =>
  `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`

/** Creates a fresh schema on the server and returns the URL of a database confined to it. */
const freshSchema = (url: string): Effect.Effect<string> => {
  const schema = `t${process.pid}_${Date.now().toString(36)}_${schemas++}`
  return Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    yield* sql.unsafe(`CREATE SCHEMA ${schema}`)
    return withSchema(url, schema)
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)
}

const sqlite: Engine = {
  name: "sqlite",
  skip: undefined,
  layer: () => Database.layerMemory,
  shared: (directory) => Effect.succeed(`${directory}/toolgate.db`),
}

const postgres = (): Engine => {
  const context = postgresContext()
  if (!("url" in context)) {
    return {
      name: "postgres",
      skip: context.reason,
      layer: () => Layer.die(new Error(`Postgres is not available: ${context.reason}`)),
      shared: () => Effect.die(new Error(`Postgres is not available: ${context.reason}`)),
    }
  }
  return {
    name: "postgres",
    skip: undefined,
    layer: () => Layer.unwrapEffect(Effect.map(freshSchema(context.url), (url) => Database.layerUrl(url))),
    shared: () => freshSchema(context.url),
  }
}

/** Both engines, SQLite first. */
export const all: ReadonlyArray<Engine> = [sqlite, postgres()]

/** Only Postgres (for behaviour that exists only there). */
export const postgresOnly: ReadonlyArray<Engine> = all.filter((engine) => engine.name === "postgres")

/**
 * `describe` once per engine; an engine that cannot run is skipped under a name that says why.
 */
export const describeEach = (
  name: string,
  body: (engine: Engine) => void,
  engines: ReadonlyArray<Engine> = all,
): void => {
  for (const engine of engines) {
    if (engine.skip === undefined) describe(`${name} [${engine.name}]`, () => body(engine))
    else describe.skip(`${name} [${engine.name}: skipped, ${engine.skip}]`, () => body(engine))
  }
}
