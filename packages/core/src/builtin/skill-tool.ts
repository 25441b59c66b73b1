/**
 * The `skill` built-in: loads one discovered skill's instructions into the conversation, with a sample of the files
 * that sit next to a `SKILL.md` so the model can find its scripts and references.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as LLM from "../values/llm.js"
import * as PermissionV2 from "../permission/permission.js"
import * as SkillV2 from "../world/skill.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "skill"

/**
 * How many neighbouring files the model output lists at most.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILE_LIMIT = 10

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description = [
  "Loads a specialized skill when the current task fits one of the skills listed in the system context.",
  "Calling it brings the skill's instructions and resources into this conversation. What comes back can include step-by-step workflow guidance and pointers to scripts, files and other material stored in the skill's own directory.",
  "The name you pass has to be one of the available skills listed in the system context.",
].join("\n\n")

/**
 * The input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  name: Schema.String.annotations({
    description: "Name of the skill to load, taken from the list of available skills",
  }),
})

/**
 * The output, also the structured output; `output` is the full model text.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({ name: Schema.String, directory: Schema.String, output: Schema.String })

/**
 * The model text for `skill` with its sampled neighbouring `files` (absolute paths).
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const toModelOutput = (skill: SkillV2.Info, files: ReadonlyArray<string>): string =>
  [
    `<skill_content name="${skill.name}">`,
    `# Skill: ${skill.name}`,
    "",
    skill.content.trim(),
    "",
    `Base directory for this skill: ${path.dirname(skill.location)}`,
    "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.",
    "Note: file list is sampled.",
    "",
    "<skill_files>",
    ...files.map((file) => `<file>${file}</file>`),
    "</skill_files>",
    "</skill_content>",
  ].join("\n")

/**
 * Up to `FILE_LIMIT` files below the skill's directory, without `SKILL.md` files; a flat skill lists none.
 *
 * @since 0.1.0
 * @category utilities
 */
export const sample = (skill: SkillV2.Info) =>
  path.basename(skill.location) !== SkillV2.SKILL_FILE
    ? Effect.succeed<ReadonlyArray<string>>([])
    : Effect.map(SkillV2.walk(path.dirname(skill.location)), (files) =>
        files.filter((file) => path.basename(file) !== SkillV2.SKILL_FILE).slice(0, FILE_LIMIT),
      )

/**
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: {
  readonly permission: PermissionV2.Interface
  readonly skills: SkillV2.Interface
  readonly fs: FileSystem.FileSystem
}) =>
  Tool.make({
    description,
    annotations: { title: "Load skill", readOnlyHint: true, openWorldHint: false },
    input: Input,
    output: Output,
    toModelOutput: ({ output }) => [{ type: "text", text: output.output }],
    execute: (input, context) =>
      Effect.gen(function* () {
        const unable = (error?: unknown) =>
          new LLM.ToolFailure({
            message: `Unable to load skill ${input.name}`,
            ...(error === undefined ? {} : { error }),
          })
        const skill = (yield* services.skills.list()).find((item) => item.name === input.name)
        if (skill === undefined) return yield* unable()
        yield* services.permission
          .assert({
            action: name,
            resources: [skill.name],
            save: [skill.name],
            ...PermissionV2.fromToolCall(context),
          })
          .pipe(
            Effect.mapError((error) =>
              error._tag === "Session.NotFoundError" ? unable(error) : PermissionV2.toToolFailure(error),
            ),
          )
        const files = yield* sample(skill).pipe(
          Effect.provideService(FileSystem.FileSystem, services.fs),
          Effect.mapError(unable),
        )
        return { name: skill.name, directory: path.dirname(skill.location), output: toModelOutput(skill, files) }
      }),
  })

/**
 * Registers `skill` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  never,
  never,
  Tools.Service | PermissionV2.Service | SkillV2.Service | FileSystem.FileSystem
> = Tools.layer(
  name,
  Effect.gen(function* () {
    const tool = make({
      permission: yield* PermissionV2.Service,
      skills: yield* SkillV2.Service,
      fs: yield* FileSystem.FileSystem,
    })
    return tool
  }),
)
