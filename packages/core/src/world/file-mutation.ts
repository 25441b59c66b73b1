/**
 * Safe file mutation shared by write, edit and apply_patch. Every operation runs under a per-canonical-path,
 * process-local lock and is uninterruptible once started. Beyond the reference, each mutation first re-checks that
 * the target's existing ancestors are still their own realpaths (a canonical path is a fixed point of realpath):
 * a symlink swapped in after approval makes the mutation fail with `PathChangedError` before anything is written.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Layer, Schema } from "effect"
import type * as LocationMutation from "./location-mutation.js"

/** `create` found the target already present. */
export class TargetExistsError extends Schema.TaggedError<TargetExistsError>()("FileMutation.TargetExistsError", {
  path: Schema.String,
}) {}

/** `writeIfUnchanged` found different bytes than expected. */
export class StaleContentError extends Schema.TaggedError<StaleContentError>()("FileMutation.StaleContentError", {
  path: Schema.String,
}) {}

/** The target or one of its ancestors is no longer the path that was resolved (e.g. a symlink was swapped in). */
export class PathChangedError extends Schema.TaggedError<PathChangedError>()("FileMutation.PathChangedError", {
  path: Schema.String,
}) {}

/** The result of a write-like operation. */
export interface WriteResult {
  readonly operation: "write"
  readonly target: string
  readonly resource: string
  readonly existed: boolean
}

/** The result of `remove`. */
export interface RemoveResult {
  readonly operation: "remove"
  readonly target: string
  readonly resource: string
  readonly existed: boolean
}

type Target = Pick<LocationMutation.Target, "canonical" | "resource">

/** The FileMutation operations. */
export interface Interface {
  readonly write: (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, PlatformError | PathChangedError>
  /** Writes text with exactly one UTF-8 BOM if the old file or the new text had one. */
  readonly writeTextPreservingBom: (input: {
    readonly target: Target
    readonly content: string
  }) => Effect.Effect<WriteResult, PlatformError | PathChangedError>
  /** Exclusive create; creates parent directories. */
  readonly create: (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, TargetExistsError | PlatformError | PathChangedError>
  /** Compare-and-swap: writes only if the current bytes equal `expected`. */
  readonly writeIfUnchanged: (input: {
    readonly target: Target
    readonly expected: Uint8Array
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, StaleContentError | PlatformError | PathChangedError>
  readonly remove: (input: { readonly target: Target }) => Effect.Effect<RemoveResult, PlatformError | PathChangedError>
}

/** The FileMutation service. */
export class Service extends Context.Tag("@toolgate/v2/FileMutation")<Service, Interface>() {}

const BOM = new Uint8Array([0xef, 0xbb, 0xbf])
const encoder = new TextEncoder()

/** True iff `bytes` start with a UTF-8 BOM. */
export const hasBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

const bytesOf = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0

const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()

/** Runs `effect` uninterruptibly while holding the process-local lock of `key`. */
const withLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.uninterruptible(
    Effect.acquireUseRelease(
      Effect.sync(() => {
        let lock = locks.get(key)
        if (lock === undefined) locks.set(key, (lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }))
        lock.users++
        return lock
      }),
      (lock) => lock.semaphore.withPermits(1)(effect),
      (lock) =>
        Effect.sync(() => {
          if (--lock.users === 0) locks.delete(key)
        }),
    ),
  )

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"
const isAlreadyExists = (error: PlatformError): boolean =>
  error._tag === "SystemError" && error.reason === "AlreadyExists"

/** Builds the service. */
export const make: Effect.Effect<Interface, never, FileSystem.FileSystem> = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem

  /** Fails unless the target is not a symlink and its nearest existing ancestor is its own realpath. */
  const verify = (canonical: string): Effect.Effect<void, PlatformError | PathChangedError> => {
    const changed = new PathChangedError({ path: canonical })
    const target = fs.readLink(canonical).pipe(
      Effect.flatMap(() => Effect.fail(changed)),
      Effect.catchIf(
        (error): error is PlatformError => error._tag !== "FileMutation.PathChangedError",
        () => Effect.void,
      ),
    )
    const ancestor = (current: string): Effect.Effect<void, PlatformError | PathChangedError> =>
      fs.realPath(current).pipe(
        Effect.flatMap((real) => (real === current ? Effect.void : Effect.fail(changed))),
        Effect.catchIf(
          (error): error is PlatformError => error._tag !== "FileMutation.PathChangedError" && isNotFound(error),
          () => (path.dirname(current) === current ? Effect.void : ancestor(path.dirname(current))),
        ),
      )
    return Effect.zipRight(target, ancestor(path.dirname(canonical)))
  }

  const readIfPresent = (canonical: string) =>
    fs.readFile(canonical).pipe(
      Effect.map((bytes): Uint8Array | undefined => bytes),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
    )

  const put = (canonical: string, bytes: Uint8Array) =>
    Effect.zipRight(fs.makeDirectory(path.dirname(canonical), { recursive: true }), fs.writeFile(canonical, bytes))

  const result = (target: Target, existed: boolean): WriteResult => ({
    operation: "write",
    target: target.canonical,
    resource: target.resource,
    existed,
  })

  const write = Effect.fn("FileMutation.write")(function* (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) {
    const { canonical } = input.target
    return yield* withLock(
      canonical,
      Effect.gen(function* () {
        yield* verify(canonical)
        const existed = yield* fs.exists(canonical)
        yield* put(canonical, bytesOf(input.content))
        return result(input.target, existed)
      }),
    )
  })

  const writeTextPreservingBom = Effect.fn("FileMutation.writeTextPreservingBom")(function* (input: {
    readonly target: Target
    readonly content: string
  }) {
    const { canonical } = input.target
    return yield* withLock(
      canonical,
      Effect.gen(function* () {
        yield* verify(canonical)
        const current = yield* readIfPresent(canonical)
        const text = input.content.replace(/^\uFEFF+/, "")
        const bom = (current !== undefined && hasBom(current)) || input.content.startsWith("\uFEFF")
        const body = encoder.encode(text)
        yield* put(canonical, bom ? Buffer.concat([BOM, body]) : body)
        return result(input.target, current !== undefined)
      }),
    )
  })

  const create = Effect.fn("FileMutation.create")(function* (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) {
    const { canonical } = input.target
    const bytes = bytesOf(input.content)
    const exclusive = fs.writeFile(canonical, bytes, { flag: "wx" })
    return yield* withLock(
      canonical,
      Effect.gen(function* () {
        yield* verify(canonical)
        yield* exclusive.pipe(
          Effect.catchIf(isNotFound, () =>
            Effect.zipRight(fs.makeDirectory(path.dirname(canonical), { recursive: true }), exclusive),
          ),
          Effect.catchIf(isAlreadyExists, () => Effect.fail(new TargetExistsError({ path: canonical }))),
        )
        return result(input.target, false)
      }),
    )
  })

  const writeIfUnchanged = Effect.fn("FileMutation.writeIfUnchanged")(function* (input: {
    readonly target: Target
    readonly expected: Uint8Array
    readonly content: string | Uint8Array
  }) {
    const { canonical } = input.target
    return yield* withLock(
      canonical,
      Effect.gen(function* () {
        yield* verify(canonical)
        const current = yield* readIfPresent(canonical)
        if (current === undefined || !sameBytes(current, input.expected)) {
          return yield* new StaleContentError({ path: canonical })
        }
        yield* fs.writeFile(canonical, bytesOf(input.content))
        return result(input.target, true)
      }),
    )
  })

  const remove = Effect.fn("FileMutation.remove")(function* (input: { readonly target: Target }) {
    const { canonical } = input.target
    return yield* withLock(
      canonical,
      Effect.gen(function* () {
        yield* verify(canonical)
        const existed = yield* fs.remove(canonical).pipe(
          Effect.as(true),
          Effect.catchIf(isNotFound, () => Effect.succeed(false)),
        )
        return {
          operation: "remove",
          target: canonical,
          resource: input.target.resource,
          existed,
        } satisfies RemoveResult
      }),
    )
  })

  return Service.of({ write, writeTextPreservingBom, create, writeIfUnchanged, remove })
})

/** The Location-scoped layer. */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem> = Layer.effect(Service, make)
