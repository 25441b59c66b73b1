/**
 * `@toolgate/core/testing`: what an embedder's unit tests use. `Core` here is the full `Core` plus `layerTest` (a
 * throw-away Location with scripted permission and question replies); `ScriptedModel` replays fixed model turns.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Core from "../testing/core.js"
/**
 * A model that replays a script of turns, for tests and the demo.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ScriptedModel from "../assembly/scripted-model.js"
/**
 * The tool contract's test entry: settle one tool without a registry, for unit tests of a tool.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ToolTest from "../testing/tool-test.js"
