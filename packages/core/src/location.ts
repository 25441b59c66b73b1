/**
 * The Location: the directory a session acts in and the project it belongs to. It is the root of every
 * Location-scoped layer.
 *
 * @since 0.1.0
 */
import { Context, Layer } from "effect"

/** The project a Location belongs to. */
export interface Project {
  readonly id: string
  readonly directory: string
}

/** A resolved Location. `directory` is a realpath. */
export interface Interface {
  readonly directory: string
  readonly workspaceID?: string
  readonly project: Project
  readonly vcs?: { readonly type: "git"; readonly store: string }
}

/** The Location service. */
export class Service extends Context.Tag("@toolgate/Location")<Service, Interface>() {}

/** A Location given as is (no project resolution, no database row); for tests of services that only read it. */
export const layerWith = (location: Interface): Layer.Layer<Service> => Layer.succeed(Service, Service.of(location))
