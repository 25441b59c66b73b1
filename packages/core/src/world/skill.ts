/**
 * SkillV2: markdown skills (`SKILL.md` with YAML front matter) discovered in the global config directory and in the
 * `.claude`, `.agents` and `.toolgate` folders from the project root down to the Location. Each source directory is
 * scanned once per Location; a later skill with the same name replaces an earlier one but keeps its position.
 * Files are confined to their source like `read`: one that resolves outside it through a symlink is skipped.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as YAML from "yaml"
import * as ConfinedWalk from "../system/confined-walk.js"
import * as Config from "../place/config.js"
import * as Global from "../system/global.js"
import * as Location from "../place/location.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as PermissionV2 from "../permission/permission.js"

/**
 * A loaded skill. `location` is the absolute path of its file; `content` is the markdown body.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  slash: Schema.optional(Schema.Boolean),
  location: Schema.String,
  content: Schema.String,
})
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = typeof Info.Type

/**
 * A directory scanned for `**\/SKILL.md`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly type: "directory"
  readonly path: string
}

/**
 * The skill service, one per Location.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Every skill, later sources winning on equal names. */
  readonly list: () => Effect.Effect<ReadonlyArray<Info>>
  /** The scanned directories, lowest priority first. */
  readonly sources: () => Effect.Effect<ReadonlyArray<Source>>
}

/**
 * The SkillV2 service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Skill")<Service, Interface>() {}

/**
 * The skill file name inside a skill directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const SKILL_FILE = "SKILL.md"

/**
 * The folders, in priority order, that hold a `skills` directory in each directory from the project root down.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROJECT_FOLDERS = [".claude", ".agents", ".toolgate"] as const

/**
 * The skills an agent may see: those whose `skill` permission does not evaluate to deny.
 *
 * @since 0.1.0
 * @category utilities
 */
export const available = (
  skills: ReadonlyArray<Info>,
  agent: { readonly permissions: PermissionV2.Ruleset },
): ReadonlyArray<Info> =>
  skills.filter((skill) => PermissionV2.evaluate("skill", skill.name, agent.permissions).effect !== "deny")

const Frontmatter = Schema.Struct({
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  slash: Schema.optional(Schema.Boolean),
})
const decodeFrontmatter = Schema.decodeUnknownOption(Frontmatter)

/**
 * Splits `---` front matter from the markdown body. A file without front matter has empty data; an unterminated
 * block or invalid YAML gives `None`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const splitFrontmatter = (text: string): Option.Option<{ readonly data: unknown; readonly content: string }> => {
  const fence = /^---[ \t]*(?:\r?\n|$)/gm
  const open = fence.exec(text)
  if (open === null || open.index !== 0) return Option.some({ data: {}, content: text })
  const close = fence.exec(text)
  if (close === null) return Option.none()
  try {
    const data: unknown = YAML.parse(text.slice(open[0].length, close.index))
    return Option.some({ data: data ?? {}, content: text.slice(close.index + close[0].length) })
  } catch {
    return Option.none()
  }
}

/**
 * Parses one skill file found in `source`. Without a front-matter `name`, the file's basename (minus `.md`) names it,
 * but only when the file sits directly in `source`. Empty, unparsable or undecodable files give `None`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parse = (file: string, text: string, source: string): Option.Option<Info> => {
  if (text.trim() === "") return Option.none()
  return Option.flatMap(splitFrontmatter(text), (markdown) =>
    Option.flatMap(decodeFrontmatter(markdown.data), (front) => {
      const name = front.name ?? (path.dirname(file) === source ? path.basename(file, ".md") : undefined)
      if (name === undefined || name === "") return Option.none()
      return Option.some({
        name,
        ...(front.description === undefined ? {} : { description: front.description }),
        ...(front.slash === undefined ? {} : { slash: front.slash }),
        location: file,
        content: markdown.content,
      })
    }),
  )
}

/**
 * Every file below `directory` (absolute paths, dotfiles included, symlinks followed once, sorted), confined like
 * `read`: a file or folder whose real path lies outside the real path of `directory` is skipped with a warning
 * naming it, so neither its content nor its name is ever returned. A directory that cannot be read fails the walk
 * unless `lenient`; entries that vanish or cannot be stat'ed are skipped.
 *
 * @since 0.1.0
 * @category utilities
 */
export const walk = (
  directory: string,
  options: { readonly lenient?: boolean } = {},
): Effect.Effect<ReadonlyArray<string>, PlatformError, FileSystem.FileSystem> =>
  ConfinedWalk.walk(directory, {
    ...(options.lenient === undefined ? {} : { lenient: options.lenient }),
    onOutside: (outside) => Config.warnSkipped(outside.entry, outside.real, outside.root),
  })

/** Loads one source directory; a missing or unreadable directory contributes nothing. */
const load = (
  source: Source,
  protectedRoots: ReadonlyArray<ProtectedPath.Root> | undefined,
): Effect.Effect<ReadonlyArray<Info>, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    if (protectedRoots !== undefined) {
      // A source whose real place is not protected (a symlink to an ordinary folder) could be edited by the model.
      const real = yield* Effect.option(fs.realPath(source.path))
      if (Option.isNone(real)) return []
      if (ProtectedPath.classify(real.value, protectedRoots) === undefined) {
        yield* Config.warnSkipped(source.path, real.value, "the protected paths")
        return []
      }
    }
    const files = yield* walk(source.path, { lenient: true }).pipe(
      Effect.orElseSucceed((): ReadonlyArray<string> => []),
    )
    const skills: Array<Info> = []
    for (const file of files) {
      if (path.basename(file) !== SKILL_FILE) continue
      const text = yield* Effect.option(fs.readFileString(file))
      if (Option.isNone(text)) continue
      const info = parse(file, text.value, source.path)
      if (Option.isSome(info)) skills.push(info.value)
    }
    return skills
  })

/** Later names replace earlier ones in place. */
const merge = (groups: ReadonlyArray<ReadonlyArray<Info>>): ReadonlyArray<Info> => {
  const byName = new Map<string, Info>()
  for (const group of groups) for (const skill of group) byName.set(skill.name, skill)
  return Array.from(byName.values())
}

/**
 * Our skill sources for a Location, lowest priority first: the user's configuration directory, then each directory
 * from the project root down to the Location (only the Location outside git; never above the project).
 *
 * @since 0.1.0
 * @category utilities
 */
export const locations = (global: Global.Interface, location: Location.Interface): ReadonlyArray<Source> => [
  { type: "directory", path: path.join(global.config, "skills") },
  ...Config.projectChain(location).flatMap((directory) =>
    PROJECT_FOLDERS.map((folder): Source => ({ type: "directory", path: path.join(directory, folder, "skills") })),
  ),
]

/**
 * Builds the service over `sources`; each source is scanned at most once (on first `list`). With `protectedRoots`, a
 * source whose real path is not a protected path is skipped with a warning (our own locations use this).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  sources: ReadonlyArray<Source>,
  options: { readonly protectedRoots?: ReadonlyArray<ProtectedPath.Root> } = {},
): Effect.Effect<Interface, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const cache = new Map<string, Effect.Effect<ReadonlyArray<Info>>>()
    for (const source of sources) {
      if (cache.has(source.path)) continue
      cache.set(
        source.path,
        yield* Effect.cached(Effect.provideService(load(source, options.protectedRoots), FileSystem.FileSystem, fs)),
      )
    }
    const list = Effect.fn("SkillV2.list")(function* () {
      const groups: Array<ReadonlyArray<Info>> = []
      for (const source of sources) groups.push(yield* cache.get(source.path)!)
      return merge(groups)
    })
    const listSources = Effect.fn("SkillV2.sources")(function* () {
      return sources
    })
    return Service.of({ list, sources: listSources })
  })

/**
 * The Location-scoped layer over our skill locations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem | Global.Service | Location.Service> =
  Layer.effect(
    Service,
    Effect.gen(function* () {
      const global = yield* Global.Service
      const location = yield* Location.Service
      return yield* make(locations(global, location), { protectedRoots: ProtectedPath.roots(location, global) })
    }),
  )

/**
 * A layer over explicit source directories, for embedders and tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromSources = (sources: ReadonlyArray<Source>): Layer.Layer<Service, never, FileSystem.FileSystem> =>
  Layer.effect(Service, make(sources))

/**
 * A fixed skill list, for embedders and tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (skills: ReadonlyArray<Info>): Layer.Layer<Service> =>
  Layer.succeed(Service, Service.of({ list: () => Effect.succeed(skills), sources: () => Effect.succeed([]) }))
