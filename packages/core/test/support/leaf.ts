/**
 * Harness for file-mutating leaf tools: a real Location on a temp directory, the real LocationMutation and
 * FileMutation over the recording filesystem, the fake PermissionV2, and the real ToolRegistry (ApplicationTools +
 * passthrough output store) to materialize and settle.
 */
import type { FileSystem } from "@effect/platform"
import { Effect, Layer } from "effect"
import {
  ApplicationTools,
  FileMutation,
  Global,
  type Location,
  LocationMutation,
  type PermissionV2,
  ProtectedPath,
  ToolOutputStore,
  ToolRegistry,
  type Tools,
} from "../../src/index.js"
import * as RecordingFs from "./file-system.js"
import { locationLayer } from "./location.js"
import * as FakePermission from "./permission.js"

/** The standard tool identity (05, common fixtures). */
export const identity = { sessionID: "ses_tool_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

/** Everything a leaf test can reach. */
export type Services =
  | ToolRegistry.Service
  | Tools.Service
  | PermissionV2.Service
  | FakePermission.FakePermissionState
  | LocationMutation.Service
  | FileMutation.Service
  | ProtectedPath.Service
  | Location.Service
  | FileSystem.FileSystem
  | RecordingFs.FileSystemRecording

/** The leaf services on `directory`, with `tools` (tool layers) registered on top. */
export const layer = <E>(
  directory: string,
  tools: Layer.Layer<never, E, Exclude<Services, FakePermission.FakePermissionState | RecordingFs.FileSystemRecording>>,
): Layer.Layer<Services, E> => {
  const base = Layer.mergeAll(locationLayer(directory), FakePermission.layer, RecordingFs.layer)
  const protection = ProtectedPath.layer.pipe(
    Layer.provide(Global.layerWith({ config: `${directory}-no-global-config` })),
  )
  const mutation = Layer.mergeAll(LocationMutation.layer, RecordingFs.fileMutationLayer, protection).pipe(
    Layer.provideMerge(base),
  )
  const registry = ToolRegistry.layer.pipe(
    Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
  )
  return tools.pipe(Layer.provideMerge(Layer.merge(registry, mutation)))
}

/** The definitions of a fresh materialization with `rules`. */
export const definitions = (rules?: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(rules)).pipe(
    Effect.map((turn) => turn.definitions),
  )

/** Settles one call of `name` with `input` through a fresh materialization (id `call-<name>`). */
export const settle = (name: string, input: unknown) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) => turn.settle({ ...identity, call: { id: `call-${name}`, name, input } })),
  )
