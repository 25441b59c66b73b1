/**
 * The Location: the directory a session acts in and the project it belongs to. It is the root of every
 * Location-scoped layer.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ProjectV2 from "./project.js"

/**
 * The project a Location belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Project {
  readonly id: string
  readonly directory: string
}

/**
 * A resolved Location. `directory` is a realpath.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly directory: string
  readonly workspaceID?: string
  readonly project: Project
  readonly vcs?: { readonly type: "git"; readonly store: string }
}

/**
 * The Location service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Location")<Service, Interface>() {}

/**
 * A Location given as is (no project resolution, no database row); for tests of services that only read it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (location: Interface): Layer.Layer<Service> => Layer.succeed(Service, Service.of(location))

/**
 * The Location directory does not exist or cannot be resolved to a real path.
 *
 * @since 0.1.0
 * @category errors
 */
export class DirectoryError extends Schema.TaggedError<DirectoryError>()("Location.DirectoryError", {
  directory: Schema.String,
  message: Schema.String,
}) {}

/**
 * Builds a Location: realpaths `directory`, resolves its project, upserts the `project` row (so saved approvals
 * and sessions satisfy their foreign keys) and caches the project id in the git common directory when it changed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (input: {
  readonly directory: string
  readonly workspaceID?: string
}): Layer.Layer<Service, DirectoryError, SqlClient.SqlClient> =>
  Layer.effect(
    Service,
    Effect.gen(function* () {
      const directory = yield* Effect.try({
        try: () => fs.realpathSync(input.directory),
        catch: (cause) =>
          new DirectoryError({
            directory: input.directory,
            message: cause instanceof Error ? cause.message : String(cause),
          }),
      })
      // `bind` records the project row and refuses an id claimed by a repository it does not belong to
      const project = yield* ProjectV2.bind(yield* ProjectV2.resolve(directory), directory)
      // `global` is never cached: it would pin a repository without commits to `global` after its first commit
      if (project.vcs !== undefined && project.previous !== project.id && project.id !== ProjectV2.GLOBAL_ID) {
        yield* ProjectV2.commit({ store: project.vcs.store, id: project.id })
      }
      return Service.of({
        directory,
        ...(input.workspaceID !== undefined ? { workspaceID: input.workspaceID } : {}),
        project: { id: project.id, directory: project.directory },
        ...(project.vcs !== undefined ? { vcs: project.vcs } : {}),
      })
    }),
  )
