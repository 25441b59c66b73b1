/**
 * A real `NodeFileSystem` wrapped to count `readFile` calls, record every `writeFile` target and run a one-shot
 * hook right after the next `readFile` (to change the world between a tool's read and its commit).
 */
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Context, Effect, Layer, Ref } from "effect"
import { FileMutation } from "../../src/index.js"

export interface Recording {
  /** How many `readFile` calls ran. */
  readonly reads: Ref.Ref<number>
  /** The paths of every `writeFile` call, in order. */
  readonly writes: Ref.Ref<ReadonlyArray<string>>
  /** Runs once, right after the next successful `readFile`. */
  readonly afterRead: Ref.Ref<Effect.Effect<void> | undefined>
}

/** The recorder of the wrapped filesystem. */
export class FileSystemRecording extends Context.Tag("test/FileSystemRecording")<FileSystemRecording, Recording>() {}

/** Provides the recording `FileSystem` and its `FileSystemRecording`. */
export const layer: Layer.Layer<FileSystem.FileSystem | FileSystemRecording> = Layer.effectContext(
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const recording: Recording = {
      reads: yield* Ref.make(0),
      writes: yield* Ref.make<ReadonlyArray<string>>([]),
      afterRead: yield* Ref.make<Effect.Effect<void> | undefined>(undefined),
    }
    const wrapped: FileSystem.FileSystem = {
      ...fs,
      readFile: (path) =>
        Effect.tap(
          Effect.zipRight(
            Ref.update(recording.reads, (n) => n + 1),
            fs.readFile(path),
          ),
          () => Effect.flatMap(Ref.getAndSet(recording.afterRead, undefined), (hook) => hook ?? Effect.void),
        ),
      writeFile: (path, data, options) =>
        Effect.zipRight(
          Ref.update(recording.writes, (all) => [...all, path]),
          fs.writeFile(path, data, options),
        ),
    }
    return Context.make(FileSystem.FileSystem, wrapped).pipe(Context.add(FileSystemRecording, recording))
  }),
).pipe(Layer.provide(NodeFileSystem.layer))

/** The number of `readFile` calls so far. */
export const reads = Effect.flatMap(FileSystemRecording, (recording) => Ref.get(recording.reads))

/** The `writeFile` targets so far. */
export const writes = Effect.flatMap(FileSystemRecording, (recording) => Ref.get(recording.writes))

/** Runs `hook` once, right after the next `readFile`. */
export const afterNextRead = (hook: Effect.Effect<void>) =>
  Effect.flatMap(FileSystemRecording, (recording) => Ref.set(recording.afterRead, hook))

/**
 * FileMutation's descriptor operations with every content write recorded in `writes` and every content read counted
 * in `reads` (FileMutation reads and writes through verified descriptors, not `FileSystem.readFile`/`writeFile`).
 * The recorded path is the file the bytes went to.
 */
export const io = (recording: Recording): FileMutation.Io => ({
  ...FileMutation.io,
  // Reads through FileMutation count as reads too, and run the one-shot hook like `readFile`.
  readAll: (handle) =>
    Effect.tap(
      Effect.zipRight(
        Ref.update(recording.reads, (n) => n + 1),
        FileMutation.io.readAll(handle),
      ),
      () => Effect.flatMap(Ref.getAndSet(recording.afterRead, undefined), (hook) => hook ?? Effect.void),
    ),
  replaceContent: (handle, bytes) =>
    Effect.zipRight(
      Ref.update(recording.writes, (all) => [...all, handle.path]),
      FileMutation.io.replaceContent(handle, bytes),
    ),
})

/** FileMutation over the recording descriptor operations. */
export const fileMutationLayer: Layer.Layer<FileMutation.Service, never, FileSystemRecording> = Layer.unwrapEffect(
  Effect.map(FileSystemRecording, (recording) => FileMutation.layerWith(io(recording))),
)
