/**
 * The layers the permission commands read a project through: the data directory's database and global paths, the
 * Location of the directory, and its discovered configuration (failures become `CliError`s with a clear message).
 *
 * @since 0.2.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Config, Database, Global, Location } from "@toolgate/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { CliError } from "./errors.js"
import { dataDirectory } from "./paths.js"

/**
 * The global, database, Location and configuration layers for `directory`, with data in `data` (or the default).
 *
 * @since 0.2.0
 * @category utilities
 */
export const projectLayers = (directory: string, data: Option.Option<string>) =>
  Effect.map(
    dataDirectory(data, () => Global.fromEnvironment().data),
    (resolved) => {
      const global = Global.layerWith({ data: resolved })
      const database = Database.layer.pipe(Layer.provide(global))
      const location = Location.layer({ directory }).pipe(
        Layer.mapError((error) => new CliError({ message: `Cannot open ${directory}: ${String(error)}` })),
        Layer.provide(database),
      )
      const config = Config.layer.pipe(
        Layer.mapError((error) => new CliError({ message: error.message })),
        Layer.provide(Layer.mergeAll(location, global, NodeContext.layer)),
      )
      return { global, database, location, config }
    },
  )
