/**
 * Watching a Location's configuration files: `run` rebuilds the Location when one of them changes.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Config, Global, Location } from "@toolgate/core"
import * as Effect from "effect/Effect"

/** The configuration files and folders a Location reads, as directories to watch (recursively for `.toolgate`). */
const watchedPaths = Effect.gen(function* () {
  const location = yield* Location.Service
  const global = yield* Global.Service
  const directories = [...Config.projectChain(location), global.config]
  return directories.flatMap((directory) => {
    const folder = path.join(directory, Config.DIRECTORY_NAME)
    return [
      { path: directory, recursive: false },
      ...(fs.existsSync(folder) ? [{ path: folder, recursive: true }] : []),
    ]
  })
})

const isConfigChange = (directory: string, file: string | null): boolean =>
  file === null ||
  path.basename(directory) === Config.DIRECTORY_NAME ||
  (Config.FILE_NAMES as ReadonlyArray<string>).includes(file) ||
  file === Config.DIRECTORY_NAME

/**
 * Calls `onChange` for every change to a configuration file of the Location, until the scope closes.
 *
 * @since 0.3.0
 * @category utilities
 */
export const watchConfiguration = (onChange: () => void) =>
  Effect.gen(function* () {
    for (const entry of yield* watchedPaths) {
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          try {
            return fs.watch(entry.path, { recursive: entry.recursive, persistent: false }, (_, file) => {
              if (isConfigChange(entry.path, file === null ? null : String(file))) onChange()
            })
          } catch {
            return undefined
          }
        }),
        (watcher) => Effect.sync(() => watcher?.close()),
      )
    }
  })
