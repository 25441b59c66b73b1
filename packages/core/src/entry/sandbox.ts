/**
 * `@toolgate/core/sandbox`: the bubblewrap sandbox of the bash tool's child processes. Not in the main entry:
 * `Core.layerLocation` loads it when a Location's configuration turns the sandbox on, and an embedder that builds
 * its own Location layers (or provides `BashTool.layer` by hand) takes `Sandbox.layer` or `Sandbox.layerNone` from
 * here. See docs/sandbox.md.
 *
 * @since 0.4.0
 * @category modules
 */
export * as Sandbox from "../world/sandbox/sandbox.js"
