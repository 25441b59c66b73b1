/**
 * The Postgres client: a `pg` pool through `@effect/sql-pg`. Loaded by `Database` only when a Postgres URL is chosen
 * (a dynamic import), so a process on SQLite never loads the Postgres driver. 64-bit integers (`BIGINT`: epoch
 * milliseconds, counters, `COUNT(*)`) are read as numbers, like SQLite's; one beyond `Number.MAX_SAFE_INTEGER` is a
 * defect rather than a silently rounded value.
 *
 * @since 0.3.0
 */
import { createRequire } from "node:module"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as CorePackage from "../core-package.js"

/**
 * Pool settings.
 *
 * @since 0.3.0
 * @category models
 */
export interface PoolOptions {
  /** Connections at most (default 10). */
  readonly maxConnections?: number
  /** How long to wait for a connection, also at start (default 10 seconds). */
  readonly connectTimeout?: Duration.DurationInput
  /** How long an idle connection is kept (default 30 seconds). */
  readonly idleTimeout?: Duration.DurationInput
}

const INT8_OID = 20

interface TypeParsers {
  readonly getTypeParser: (oid: number, format?: string) => (value: string) => unknown
}

/** `pg`'s own type parsers, from the client library's dependency tree (the module its pool uses). */
const pgTypes = (): TypeParsers =>
  (createRequire(CorePackage.require.resolve("@effect/sql-pg"))("pg") as { readonly types: TypeParsers }).types

const parseInt8 = (value: string): number => {
  const number = Number(value)
  if (!Number.isSafeInteger(number)) throw new RangeError(`BIGINT ${value} is beyond the safe integer range`)
  return number
}

/**
 * `url` with its password replaced by `***`, for messages and spans.
 *
 * @since 0.3.0
 * @category models
 */
export const redact = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "postgres://(unparsable URL)"
  }
}

/**
 * A pooled client on `url`. The layer fails when no connection can be made within the connect timeout.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (url: string, options: PoolOptions = {}): Layer.Layer<SqlClient.SqlClient, unknown> => {
  const defaults = pgTypes()
  return PgClient.layer({
    url: Redacted.make(url),
    applicationName: "toolgate",
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: Duration.decode(options.connectTimeout ?? "10 seconds"),
    idleTimeout: Duration.decode(options.idleTimeout ?? "30 seconds"),
    types: {
      getTypeParser: (oid: number, format?: string) =>
        oid === INT8_OID && format !== "binary" ? parseInt8 : defaults.getTypeParser(oid, format),
    } as never,
  })
}
