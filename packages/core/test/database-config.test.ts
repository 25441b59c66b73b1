import * as fs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqlClient from "@effect/sql/SqlClient"
import { Config, Database, Global, Location } from "../src/index.js"
import * as DatabaseConfig from "../src/system/database-config.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const SECRET = "s3cret-pw"

/** Global directories with the user's configuration directory at `<root>/config`. */
const globalAt = (root: string): Global.Interface => ({
  data: path.join(root, "data"),
  config: path.join(root, "config"),
  tmp: path.join(root, "tmp"),
  home: root,
})

const failure = (global: Global.Interface, url?: string) => Effect.flip(DatabaseConfig.resolve(global, url))

describe("DatabaseConfig: which database a process opens", () => {
  it.scoped("no URL anywhere: SQLite, default pool", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      write(path.join(global.config, "toolgate.json"), `{ "preset": "guarded" }`)
      expect(yield* DatabaseConfig.resolve(global, undefined)).toEqual({ url: undefined, pool: {}, source: undefined })
    }),
  )

  it.scoped("database.url of the user's file names Postgres, with its pool; the file is the source", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      const file = path.join(global.config, "toolgate.json")
      write(
        file,
        `{ // comments and trailing commas are JSONC
          "database": { "url": "postgres://u:${SECRET}@db.internal:5432/toolgate",
            "pool": { "max_connections": 4, "connect_timeout_ms": 2500, "idle_timeout_ms": 60000 }, }, }`,
      )
      expect(yield* DatabaseConfig.resolve(global, undefined)).toEqual({
        url: `postgres://u:${SECRET}@db.internal:5432/toolgate`,
        pool: { maxConnections: 4, connectTimeout: 2500, idleTimeout: 60000 },
        source: file,
      })
    }),
  )

  it.scoped("TOOLGATE_DATABASE_URL wins over database.url; database.pool still applies", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      write(
        path.join(global.config, "toolgate.json"),
        `{ "database": { "url": "postgres://file-host/db", "pool": { "max_connections": 3 } } }`,
      )
      expect(yield* DatabaseConfig.resolve(global, "postgres://env-host/db")).toEqual({
        url: "postgres://env-host/db",
        pool: { maxConnections: 3 },
        source: "TOOLGATE_DATABASE_URL",
      })
    }),
  )

  it.scoped("toolgate.jsonc comes after toolgate.json: its whole database section wins", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      write(
        path.join(global.config, "toolgate.json"),
        `{ "database": { "url": "postgres://json/db", "pool": { "max_connections": 3 } } }`,
      )
      write(path.join(global.config, "toolgate.jsonc"), `{ "database": { "url": "postgres://jsonc/db" } }`)
      const choice = yield* DatabaseConfig.resolve(global, undefined)
      expect(choice).toEqual({
        url: "postgres://jsonc/db",
        pool: {},
        source: path.join(global.config, "toolgate.jsonc"),
      })
      expect(DatabaseConfig.FILE_NAMES).toEqual(Config.FILE_NAMES)
    }),
  )

  it.scoped("a project's toolgate.json is never read for the database", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = globalAt(root)
      write(path.join(root, "toolgate.json"), `{ "database": { "url": "postgres://project/db" } }`)
      expect((yield* DatabaseConfig.resolve({ ...global, config: path.join(root, "missing") }, undefined)).url).toBe(
        undefined,
      )
    }),
  )

  it.scoped("a configuration file that is a symlink out of the directory is skipped, as discovery skips it", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = globalAt(root)
      write(path.join(root, "elsewhere.json"), `{ "database": { "url": "postgres://elsewhere/db" } }`)
      fs.mkdirSync(global.config, { recursive: true })
      fs.symlinkSync(path.join(root, "elsewhere.json"), path.join(global.config, "toolgate.json"))
      expect((yield* DatabaseConfig.resolve(global, undefined)).url).toBe(undefined)
    }),
  )

  describe("bad values fail closed, naming the file and the field", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      [
        "zero connections",
        `{ "pool": { "max_connections": 0 } }`,
        "database.pool.max_connections: Expected a positive number, actual 0",
      ],
      [
        "a fraction",
        `{ "pool": { "max_connections": 2.5 } }`,
        "database.pool.max_connections: Expected an integer, actual 2.5",
      ],
      [
        "a string timeout",
        `{ "pool": { "connect_timeout_ms": "10s" } }`,
        `database.pool.connect_timeout_ms: Expected number, actual "10s"`,
      ],
      [
        "a timeout beyond Node's timers",
        `{ "pool": { "idle_timeout_ms": 3000000000 } }`,
        "database.pool.idle_timeout_ms: at most 2147483647 milliseconds",
      ],
      ["a misspelt pool key", `{ "pool": { "max_conections": 5 } }`, "database.pool.max_conections: is unexpected"],
      ["an unknown database key", `{ "uri": "postgres://h/db" }`, "database.uri: is unexpected"],
      ["a URL that is not a string", `{ "url": 5432 }`, "database.url: Expected string, actual 5432"],
      [
        "a section that is not an object",
        `"postgres://u:${SECRET}@h/db"`,
        "database: expected an object { url?, pool? }",
      ],
      ["a pool that is not an object", `{ "pool": 5 }`, "database.pool: expected an object { max_connections?"],
    ]
    for (const [name, section, expected] of cases) {
      it.scoped(name, () =>
        Effect.gen(function* () {
          const global = globalAt(yield* tempDir())
          const file = path.join(global.config, "toolgate.json")
          write(file, `{ "database": ${section} }`)
          const error = yield* failure(global)
          expect(error).toBeInstanceOf(DatabaseConfig.InvalidError)
          expect(error._tag).toBe("DatabaseConfig.InvalidError")
          expect(error.path).toBe(file)
          expect(error.message).toContain(`Invalid config in ${file} at `)
          expect(error.message).toContain(expected)
          expect(error.message.split("\n")).toHaveLength(1)
          expect(error.message).not.toContain(SECRET)
        }),
      )
    }

    it.scoped("a URL of another scheme is rejected without repeating it (it may hold a password)", () =>
      Effect.gen(function* () {
        const global = globalAt(yield* tempDir())
        const file = path.join(global.config, "toolgate.jsonc")
        write(file, `{ "database": { "url": "mysql://u:${SECRET}@h/db" } }`)
        const error = yield* failure(global)
        expect(error.path).toBe(file)
        expect(error.message).toContain(`Invalid config in ${file} at database.url: expected a postgres://`)
        expect(error.message).not.toContain(SECRET)
      }),
    )

    it.scoped("an invalid section fails even when TOOLGATE_DATABASE_URL names the database", () =>
      Effect.gen(function* () {
        const global = globalAt(yield* tempDir())
        write(path.join(global.config, "toolgate.json"), `{ "database": { "pool": { "max_connections": -1 } } }`)
        const error = yield* failure(global, "postgres://env-host/db")
        expect(error.message).toContain("database.pool.max_connections")
      }),
    )

    it.scoped("a JSONC syntax error names the file, line and column", () =>
      Effect.gen(function* () {
        const global = globalAt(yield* tempDir())
        const file = path.join(global.config, "toolgate.json")
        write(file, `{\n  "database": { "url": }\n}`)
        const error = yield* failure(global)
        expect(error.message).toMatch(new RegExp(`^Invalid JSONC in ${file} at line 2, column \\d+`))
      }),
    )

    it.scoped("choose (what Database.layer uses) dies with the InvalidError", () =>
      Effect.gen(function* () {
        const global = globalAt(yield* tempDir())
        write(path.join(global.config, "toolgate.json"), `{ "database": { "pool": { "max_connections": 0 } } }`)
        const defect = yield* Effect.flip(Effect.catchAllDefect(DatabaseConfig.choose(global, undefined), Effect.fail))
        expect(defect).toBeInstanceOf(DatabaseConfig.InvalidError)
      }),
    )
  })
})

describe("Config declares the database section", () => {
  const discovered = (options: { readonly directory: string; readonly global: string }) =>
    Config.layer.pipe(
      Layer.provide(
        Layer.mergeAll(
          NodeFileSystem.layer,
          Global.layerWith({ config: options.global }),
          Location.layerWith({
            directory: options.directory,
            project: { id: "p", directory: options.directory },
          }),
        ),
      ),
    )
  const entriesOf = (layer: Layer.Layer<Config.Service, Config.InvalidError>) =>
    Effect.flatMap(Config.Service, (config) => config.entries()).pipe(Effect.provide(layer))

  it.scoped("in the user's configuration file it is a known key (the Location builds)", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      const project = path.join(root, "project")
      write(
        path.join(global, "toolgate.json"),
        `{ "database": { "url": "postgres://h/db", "pool": { "max_connections": 2 } } }`,
      )
      fs.mkdirSync(project)
      const entries = yield* entriesOf(discovered({ directory: project, global }))
      expect(Config.latest(entries, "database")).toEqual({ url: "postgres://h/db", pool: { max_connections: 2 } })
    }),
  )

  it.scoped("in the user's configuration file a bad value fails the Location too, naming file and field", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      const project = path.join(root, "project")
      write(path.join(global, "toolgate.json"), `{ "database": { "url": "mysql://u:${SECRET}@h/db" } }`)
      fs.mkdirSync(project)
      const error = yield* Effect.flip(entriesOf(discovered({ directory: project, global })))
      expect(error._tag).toBe("Config.InvalidError")
      expect(error.message).toContain(`${path.join(global, "toolgate.json")} at database.url`)
      expect(error.message).not.toContain(SECRET)
    }),
  )

  it.scoped("in a project's file it fails the Location: a repository does not choose the database", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      const project = path.join(root, "project")
      const file = path.join(project, "toolgate.json")
      write(file, `{ "database": { "url": "postgres://attacker/db" } }`)
      const error = yield* Effect.flip(entriesOf(discovered({ directory: project, global })))
      expect(error._tag).toBe("Config.InvalidError")
      expect(error.path).toBe(file)
      expect(error.message).toContain(`Invalid config in ${file} at database: the database is chosen per process`)
    }),
  )
})

Engines.describeEach(
  "Database.layer reads the user's configuration file",
  (engine) => {
    it.scoped("database.url of the user's file opens Postgres, migrated, with its pool", () =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const global = globalAt(root)
        const url = yield* engine.shared(root)
        write(
          path.join(global.config, "toolgate.json"),
          JSON.stringify({ database: { url, pool: { max_connections: 2 } } }),
        )
        const rows = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ applied: number }>`SELECT COUNT(*) AS applied FROM effect_sql_migrations`,
        ).pipe(Effect.provide(Database.layer.pipe(Layer.provide(Global.layerWith(global)))))
        expect(rows[0]?.applied).toBe(Object.keys(Database.migrations).length)
        expect(fs.existsSync(path.join(global.data, "toolgate.db"))).toBe(false)
      }),
    )

    it.scoped("an invalid section stops Database.layer with the InvalidError", () =>
      Effect.gen(function* () {
        const global = globalAt(yield* tempDir())
        write(path.join(global.config, "toolgate.json"), `{ "database": { "pool": { "idle_timeout_ms": 0 } } }`)
        const defect = yield* Effect.flip(
          Effect.catchAllDefect(
            Effect.provide(Effect.void, Database.layer.pipe(Layer.provide(Global.layerWith(global)))),
            Effect.fail,
          ),
        )
        expect(defect).toBeInstanceOf(DatabaseConfig.InvalidError)
      }),
    )
  },
  Engines.postgresOnly,
)
