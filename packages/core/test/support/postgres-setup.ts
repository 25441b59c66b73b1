/**
 * vitest globalSetup: one throwaway Postgres server per test run (scripts/postgres.mjs: a temporary data directory,
 * a free port on 127.0.0.1, run as the `postgres` user when we are root), stopped when the run ends. Its URL reaches
 * the tests as `inject("toolgatePostgres")` and `TOOLGATE_TEST_DATABASE_URL`. A URL already in
 * `TOOLGATE_TEST_DATABASE_URL` is used as it is (nothing started). Without the Postgres binaries the Postgres half of
 * the engine suites is skipped and the reason printed here and in the skipped suites' names.
 */
import type { TestProject } from "vitest/node"

/** What the tests learn: the server's URL, or why there is none. */
export type PostgresContext = { readonly url: string } | { readonly reason: string }

declare module "vitest" {
  export interface ProvidedContext {
    toolgatePostgres: PostgresContext
  }
}

interface Started {
  readonly url?: string
  readonly dir?: string
  readonly reason?: string
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env.TOOLGATE_TEST_DATABASE_URL
  if (given !== undefined && given !== "") {
    project.provide("toolgatePostgres", { url: given })
    return undefined
  }
  // @ts-expect-error a plain ESM script without declarations
  const script = (await import("../../../../scripts/postgres.mjs")) as {
    readonly start: () => Promise<Started>
    readonly stop: (dir: string) => void
  }
  let started: Started
  try {
    started = await script.start()
  } catch (error) {
    started = { reason: `the server did not start: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (started.url === undefined || started.dir === undefined) {
    const reason = started.reason ?? "the server did not start"
    process.stderr.write(`postgres-setup: the Postgres half of the engine suites is skipped: ${reason}\n`)
    project.provide("toolgatePostgres", { reason })
    return undefined
  }
  process.env.TOOLGATE_TEST_DATABASE_URL = started.url
  project.provide("toolgatePostgres", { url: started.url })
  const dir = started.dir
  return () => script.stop(dir)
}
