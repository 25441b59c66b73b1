/**
 * `toolgate permissions explain [--dir D] [--agent A] <action> <resource…>`: why a request would be allowed, asked or
 * denied, as a readable trace (`PermissionExplain`); `explain bash '<command>'` traces each segment of the command.
 *
 * @since 0.2.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  AgentV2,
  BashTool,
  LocationMutation,
  PermissionExplain,
  PermissionSaved,
  ProtectedPath,
  ShellCommand,
} from "@toolgate/core"
import { CliError } from "./errors.js"
import { projectLayers } from "./project-layers.js"

/**
 * Prints the trace; fails with a clear message for a bad configuration or an unknown agent.
 *
 * @since 0.2.0
 * @category utilities
 */
export const explain = (options: {
  readonly directory: string
  readonly agent: Option.Option<string>
  readonly data: Option.Option<string>
  readonly action: string
  readonly resources: ReadonlyArray<string>
}): Effect.Effect<void, CliError> =>
  Effect.gen(function* () {
    const { global, database, location, config } = yield* projectLayers(options.directory, options.data)
    const layer = PermissionExplain.layer.pipe(
      Layer.provide(
        Layer.mergeAll(
          AgentV2.layer.pipe(Layer.provide(Layer.mergeAll(config, global, location))),
          config,
          global,
          location,
          PermissionSaved.layer.pipe(Layer.provide(database)),
          ShellCommand.layer,
          // The bash tool's own planner setting, so the trace lists exactly what the tool will ask.
          BashTool.layerPlan.pipe(
            Layer.provide(
              Layer.mergeAll(
                LocationMutation.layer.pipe(Layer.provide(Layer.merge(location, NodeContext.layer))),
                ProtectedPath.layer.pipe(Layer.provide(Layer.merge(location, global))),
                config,
                NodeContext.layer,
              ),
            ),
          ),
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
      Effect.catchTags({
        "PermissionExplain.AgentNotFoundError": (error) => new CliError({ message: error.message }),
        "Hooks.HookError": (error) => new CliError({ message: error.message }),
      }),
      Effect.provide(layer),
    )
    yield* Console.log(PermissionExplain.render(trace))
  })
