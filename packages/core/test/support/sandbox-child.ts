/**
 * Runs shell commands through the real Sandbox layer and AppProcess, in a process of its own, so a test can do it
 * as another user (`runuser -u nobody -- node … sandbox-child.ts`). Input: one JSON argument `{ root, home, tmp,
 * config, bash, commands }`; output: one JSON line, `{ results: [{ exit, output, note }], autoAllow }` or `{ error }`.
 * A root inside a git repository is a git Location (its project resolved as `Location.layer` would).
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
// Module by module rather than the package index: this process starts once per case, as another user too.
import * as Config from "../../src/place/config.js"
import * as EventV2 from "../../src/place/event.js"
import * as Location from "../../src/place/location.js"
import * as Project from "../../src/place/project.js"
import * as Global from "../../src/system/global.js"
import * as AppProcess from "../../src/world/app-process.js"
import * as Sandbox from "../../src/world/sandbox/sandbox.js"

interface Input {
  readonly root: string
  readonly home: string
  readonly tmp: string
  readonly config: string
  readonly bash: typeof Config.Bash.Type
  readonly commands: ReadonlyArray<string>
}

const input = JSON.parse(process.argv[2] ?? "{}") as Input
const location = Layer.unwrapEffect(
  Effect.map(Project.resolve(input.root), (project) =>
    Location.layerWith({
      directory: input.root,
      project:
        project.vcs === undefined
          ? { id: "global", directory: path.parse(input.root).root }
          : { id: project.id, directory: project.directory },
      ...(project.vcs === undefined ? {} : { vcs: project.vcs }),
    }),
  ),
)
const layer = Sandbox.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      location,
      EventV2.layer.pipe(Layer.provide(location)),
      Global.layerWith({ tmp: input.tmp, home: input.home, config: input.config }),
      Config.layerFromEntries([{ type: "document", info: { bash: input.bash } }]),
      AppProcess.layer,
    ),
  ),
)

const main = Effect.gen(function* () {
  const sandbox = yield* Sandbox.Service
  const results: Array<{ exit: number; output: string; note: string | undefined }> = []
  for (const command of input.commands) {
    const result = yield* Effect.scoped(
      Effect.gen(function* () {
        const prepared = yield* sandbox.prepare({ command, cwd: input.root, shell: "/bin/sh" })
        const run = yield* (yield* AppProcess.Service).run(prepared, { combineOutput: true, timeout: "30 seconds" })
        const output = Buffer.from(run.output ?? new Uint8Array()).toString("utf8")
        return { exit: run.exitCode, output, note: yield* prepared.note(output) }
      }),
    )
    results.push(result)
  }
  return { results, autoAllow: sandbox.autoAllow }
}).pipe(Effect.provide(layer))

Effect.runPromise(main).then(
  (outcome) => process.stdout.write(`${JSON.stringify(outcome)}\n`),
  (error: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`)
    process.exitCode = 1
  },
)
