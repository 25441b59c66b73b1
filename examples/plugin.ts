/**
 * A plugin from code: one tool and three hooks, on a throw-away Location. The tool is gated (it asserts its own
 * permission) and its output bounded like a built-in's; the hooks deny, rewrite and tighten, and each decision is in
 * the decision journal as `hook:<plugin>/<hook>`. See docs/plugins.md.
 *
 * Run: npx tsx examples/plugin.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Schema, Stream } from "effect"
import {
  Approvals,
  Core,
  DecisionJournal,
  Hooks,
  PermissionV2,
  Plugin,
  SessionV2,
  SettleInput,
  Tool,
  ToolRegistry,
} from "@toolgate/core"

// The plugin: a `deploy` tool that asks permission `deploy` for its target, and hooks that can only tighten.
const release = Plugin.make({
  name: "release",
  tools: Effect.map(PermissionV2.Service, (permission) => ({
    deploy: Tool.make({
      description: "Deploy the current build to a target",
      input: Schema.Struct({ target: Schema.String }),
      output: Schema.String,
      execute: (input, context) =>
        permission
          .assert({ ...PermissionV2.fromToolCall(context), action: "deploy", resources: [input.target] })
          .pipe(
            Effect.mapError(PermissionV2.leafFailure((error) => new Tool.Failure({ message: String(error) }))),
            Effect.as(`deployed to ${input.target}`),
          ),
    }),
  })),
  hooks: {
    // Refuse one target outright, and send `stage` to its canonical name (decoded and evaluated again).
    "tool.before": (call) => {
      const target = (call.input as { target?: unknown }).target
      if (target === "mainframe") return Effect.succeed(Hooks.deny("the mainframe is frozen"))
      if (target === "stage") return Effect.succeed(Hooks.rewrite({ target: "staging" }))
      return Effect.succeed(Hooks.proceed)
    },
    // Production always asks, even where a rule allows it. `request.allow` does not exist: the types stop a loosening.
    "permission.evaluate": (request) =>
      Effect.succeed(
        request.action === "deploy" && request.resources.includes("production")
          ? request.ask("production deploys are reviewed")
          : request.keep,
      ),
  },
})

const program = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const approvals = yield* Approvals.Service
  // Stands in for a person: answers every ask `once`, printing what it was asked (any channel could answer).
  yield* Effect.forkScoped(
    Stream.runForEach(approvals.prompts(), (event) =>
      event._tag === "Asked"
        ? Effect.zipRight(
            Effect.sync(() => console.log(`  asked: ${event.prompt.request.action} ${event.prompt.request.resources}`)),
            Effect.ignore(
              approvals.answer({
                requestID: event.prompt.request.id,
                digest: event.prompt.digest,
                choice: "once",
                channel: "example",
              }),
            ),
          )
        : Effect.void,
    ),
  )
  const turn = yield* (yield* ToolRegistry.Service).materialize([])
  const identity = SettleInput.identity({ sessionID: session.id, agent: "build" })
  for (const target of ["stage", "mainframe", "production"]) {
    console.log(`deploy ${target}`)
    const settled = yield* turn.settle(SettleInput.make(identity, { name: "deploy", input: { target } }))
    console.log(`  -> ${settled.result.type}: ${String(settled.result.value)}`)
  }
  for (const entry of yield* (yield* DecisionJournal.Service).query({ kinds: ["hook"] }))
    if (entry.kind === "hook") console.log(`journal: ${entry.detail.origin} ${entry.detail.decision}`)
})

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-plugin-example-"))
const location = Core.layer({
  directory,
  memoryDatabase: true,
  discover: false,
  config: { permissions: [{ action: "deploy", resource: "*", effect: "allow" }] },
})
Effect.runPromise(program.pipe(Effect.provide(release.pipe(Layer.provideMerge(location))), Effect.scoped)).finally(() =>
  fs.rmSync(directory, { recursive: true, force: true }),
)
