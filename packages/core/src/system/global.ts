/**
 * Where toolgate keeps its files: the data, config and tmp directories. Paths several floors need (the managed
 * tool-output directory, the database file) are derived here so lower floors never import higher ones.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * The resolved directories.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** `$XDG_DATA_HOME/toolgate`, default `~/.local/share/toolgate`. */
  readonly data: string
  /** `$XDG_CONFIG_HOME/toolgate`, default `~/.config/toolgate`. */
  readonly config: string
  /** `os.tmpdir()/toolgate`. */
  readonly tmp: string
  /** The user's home directory, used for `~` expansion. */
  readonly home: string
}

/**
 * The Global service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Global")<Service, Interface>() {}

/**
 * The managed tool-output directory name under the data directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const TOOL_OUTPUT_DIRECTORY = "tool-output"

/**
 * `<data>/tool-output`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toolOutput = (global: Interface): string => path.join(global.data, TOOL_OUTPUT_DIRECTORY)

/**
 * `<data>/tool-output/<key>`: one project's managed tool output (`key` from `Project.storageKey`). See
 * docs/trust/managed-output.md.
 *
 * @since 0.2.0
 * @category utilities
 */
export const toolOutputFor = (global: Interface, key: string): string => path.join(toolOutput(global), key)

/**
 * `<data>/toolgate.db`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const database = (global: Interface): string => path.join(global.data, "toolgate.db")

/**
 * Resolves the directories from an environment (defaults to `process.env`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEnvironment = (env: NodeJS.ProcessEnv = process.env): Interface => {
  const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : os.homedir()
  const dataHome =
    env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== "" ? env.XDG_DATA_HOME : path.join(home, ".local", "share")
  const configHome =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : path.join(home, ".config")
  return {
    data: path.join(dataHome, "toolgate"),
    config: path.join(configHome, "toolgate"),
    tmp: path.join(os.tmpdir(), "toolgate"),
    home,
  }
}

/**
 * The directories from the process environment.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.sync(Service, () => fromEnvironment())

/**
 * Explicit directories, for tests and embedders; anything not given comes from the environment.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (paths: Partial<Interface>): Layer.Layer<Service> =>
  Layer.sync(Service, () => ({ ...fromEnvironment(), ...paths }))
