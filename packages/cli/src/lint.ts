/**
 * `toolgate permissions lint [--dir D]`: the `PermissionLint` findings for a project's configuration (files, agent
 * files) and its saved approvals. Exits 1 when any finding is an error.
 *
 * @since 0.2.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Config, Location, PermissionLint, PermissionSaved, Project } from "@toolgate/core"
import { CliError } from "./errors.js"
import { projectLayers } from "./project-layers.js"

/**
 * Prints the findings; fails (exit 1) when there is an error among them.
 *
 * @since 0.2.0
 * @category utilities
 */
export const lint = (options: {
  readonly directory: string
  readonly data: Option.Option<string>
}): Effect.Effect<void, CliError> =>
  Effect.gen(function* () {
    const { database, location, config } = yield* projectLayers(options.directory, options.data)
    const findings = yield* Effect.gen(function* () {
      const entries = yield* (yield* Config.Service).entries()
      const here = yield* Location.Service
      const rows = yield* (yield* PermissionSaved.Service).list(Project.approvalScope(here.project.id, here.directory))
      return yield* PermissionLint.lintEntries(entries, rows)
    }).pipe(Effect.provide(Layer.mergeAll(config, location, PermissionSaved.layer.pipe(Layer.provide(database)))))
    yield* Console.log(PermissionLint.render(findings))
    const errors = findings.filter((finding) => finding.level === "error").length
    if (errors > 0) {
      return yield* new CliError({ message: `lint found ${errors} error${errors === 1 ? "" : "s"}` })
    }
  })
