/**
 * A child of bench/multi-host.ts: one asking process. Usage: multi-host-child.ts <database> <data> <directory> <asks>
 * (`<database>`: a Postgres URL, or `sqlite` for `<data>/toolgate.db`). Starts <asks> `assert`s reading
 * `bench/a<i>.ts` (configured `ask`), prints `{"scope":…}` once all are pending, then `released` once every one has
 * returned (released by an approval saved elsewhere), and exits.
 */
import { Effect, Fiber } from "effect"
import { Core, Database, PermissionV2, SessionV2 } from "@toolgate/core"

const [database, data, directory, asks] = process.argv.slice(2)
if (database === undefined || data === undefined || directory === undefined || asks === undefined)
  throw new Error("usage: multi-host-child.ts <database> <data> <directory> <asks>")
if (database !== "sqlite") process.env[Database.URL_VARIABLE] = database

const program = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const count = Number(asks)
  const fibers = yield* Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) =>
      Effect.fork(
        permission.assert({ sessionID: session.id, agent: "build", action: "read", resources: [`bench/a${i}.ts`] }),
      ),
  )
  while ((yield* permission.list()).length < count) yield* Effect.sleep("20 millis")
  const first = (yield* permission.list())[0]!
  process.stdout.write(JSON.stringify({ scope: first.always?.scope }) + "\n")
  yield* Fiber.joinAll(fibers)
  process.stdout.write("released\n")
}).pipe(
  Effect.scoped,
  Effect.provide(
    Core.layer({
      directory,
      data,
      discover: false,
      config: { permissions: [{ action: "read", resource: "bench/*", effect: "ask" }] },
    }),
  ),
)

Effect.runPromise(program).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(Database.describe(error) + "\n")
    process.exit(1)
  },
)
