/**
 * `toolgate permissions explain [--dir D] [--agent A] <action> <resource…>`: why a request would be allowed, asked or
 * denied, as a readable trace (`PermissionExplain`); `explain bash '<command>'` traces each segment of the command.
 *
 * @since 0.2.0
 */
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import {
  AgentV2,
  Config,
  Database,
  Global,
  Location,
  PermissionExplain,
  PermissionSaved,
  ShellCommand,
} from "@toolgate/core"
import { CliError } from "./errors.js"
import { dataDirectory } from "./paths.js"

/** Prints the trace; fails with a clear message for a bad configuration or an unknown agent. */
export const explain = (options: {
  readonly directory: string
  readonly agent: Option.Option<string>
  readonly data: Option.Option<string>
  readonly action: string
  readonly resources: ReadonlyArray<string>
}): Effect.Effect<void, CliError> =>
  Effect.gen(function* () {
    const data = yield* dataDirectory(options.data, () => Global.fromEnvironment().data)
    const global = Global.layerWith({ data })
    const database = Database.layer.pipe(Layer.provide(global))
    const location = Location.layer({ directory: options.directory }).pipe(
      Layer.mapError((error) => new CliError({ message: `Cannot open ${options.directory}: ${String(error)}` })),
      Layer.provide(database),
    )
    const config = Config.layer.pipe(
      Layer.mapError((error) => new CliError({ message: error.message })),
      Layer.provide(Layer.mergeAll(location, global, NodeContext.layer)),
    )
    const layer = PermissionExplain.layer.pipe(
      Layer.provide(
        Layer.mergeAll(
          AgentV2.layer.pipe(Layer.provide(Layer.mergeAll(config, global, location))),
          config,
          global,
          location,
          PermissionSaved.layer.pipe(Layer.provide(database)),
          ShellCommand.layer,
        ),
      ),
    )
    const agent = Option.getOrUndefined(options.agent)
    const input =
      options.action === "bash"
        ? { action: "bash", command: options.resources.join(" ") }
        : { action: options.action, resources: options.resources }
    const trace = yield* Effect.flatMap(PermissionExplain.Service, (service) =>
      service.explain({ ...input, ...(agent === undefined ? {} : { agent }) }),
    ).pipe(
      Effect.catchTag("PermissionExplain.AgentNotFoundError", (error) => new CliError({ message: error.message })),
      Effect.provide(layer),
    )
    yield* Console.log(PermissionExplain.render(trace))
  })
