/**
 * One spelling per configuration key: snake_case. The keys that were also written in camelCase keep that spelling
 * as a deprecated alias: `canonicalKeys` renames an alias to its canonical key before the document is decoded and
 * reports where it did (for `PermissionLint`), and refuses an object that holds both spellings of one key. See
 * docs/configuration.md.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"

/**
 * A deprecated spelling of a configuration key: in the objects at `section` (a dotted path; `<rule>` stands for
 * every permission rule, top-level or an agent's), `alias` is read as `canonical`.
 *
 * @since 0.4.0
 * @category models
 */
export interface Alias {
  readonly section: string
  readonly alias: string
  readonly canonical: string
}

/**
 * Every deprecated spelling, by section.
 *
 * @since 0.4.0
 * @category constants
 */
export const ALIASES: ReadonlyArray<Alias> = [
  { section: "permission", alias: "askTimeout", canonical: "ask_timeout" },
  { section: "bash.sandbox", alias: "readOnly", canonical: "read_only" },
  { section: "bash.sandbox", alias: "denyRead", canonical: "deny_read" },
  { section: "bash.sandbox", alias: "allowUnixSockets", canonical: "allow_unix_sockets" },
  { section: "bash.sandbox", alias: "autoAllow", canonical: "auto_allow" },
  { section: "bash.sandbox", alias: "failIfUnavailable", canonical: "fail_if_unavailable" },
  { section: "<rule>.examples", alias: "notMatch", canonical: "not_match" },
]

/**
 * A deprecated spelling found in a document: the key as written (`bash.sandbox.readOnly`,
 * `permissions[2].examples.notMatch`) and its canonical name (`bash.sandbox.read_only`).
 *
 * @since 0.4.0
 * @category models
 */
export interface DeprecatedKey {
  readonly key: string
  readonly canonical: string
}

type Raw = Record<string, unknown>

const isObject = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value)

/** An object a section names: its dotted path as written, the keys that lead to it, and the object. */
interface Section {
  readonly where: string
  readonly path: ReadonlyArray<string | number>
  readonly object: Raw
}

/** The objects a section names in `document`. */
const sections = (document: Raw, section: string): ReadonlyArray<Section> => {
  if (section.startsWith("<rule>.")) {
    const field = section.slice("<rule>.".length)
    const lists: Array<{ readonly where: string; readonly path: ReadonlyArray<string>; readonly rules: unknown }> = [
      { where: "permissions", path: ["permissions"], rules: document["permissions"] },
    ]
    if (isObject(document["agents"]))
      for (const [id, agent] of Object.entries(document["agents"]))
        if (isObject(agent))
          lists.push({
            where: `agents.${id}.permissions`,
            path: ["agents", id, "permissions"],
            rules: agent["permissions"],
          })
    return lists.flatMap(({ where, path, rules }) =>
      Array.isArray(rules)
        ? rules.flatMap((rule: unknown, i) =>
            isObject(rule) && isObject(rule[field])
              ? [{ where: `${where}[${i}].${field}`, path: [...path, i, field], object: rule[field] }]
              : [],
          )
        : [],
    )
  }
  const path = section.split(".")
  let object: unknown = document
  for (const part of path) object = isObject(object) ? object[part] : undefined
  return isObject(object) ? [{ where: section, path, object }] : []
}

/**
 * `document` with every deprecated spelling renamed to its canonical key (the objects on the way copied, the input
 * left alone), and the spellings it found; or the message for an object holding both spellings of one key.
 *
 * @since 0.4.0
 * @category utilities
 */
export const canonicalKeys = (
  document: unknown,
): Either.Either<{ readonly document: unknown; readonly deprecated: ReadonlyArray<DeprecatedKey> }, string> => {
  if (!isObject(document)) return Either.right({ document, deprecated: [] })
  const found: Array<Section & { readonly alias: Alias }> = []
  for (const alias of ALIASES)
    for (const section of sections(document, alias.section))
      if (Object.hasOwn(section.object, alias.alias)) {
        if (Object.hasOwn(section.object, alias.canonical))
          return Either.left(
            `${section.where} has both ${JSON.stringify(alias.alias)} and ${JSON.stringify(alias.canonical)}: keep ${JSON.stringify(alias.canonical)} (${JSON.stringify(alias.alias)} is its deprecated spelling)`,
          )
        found.push({ ...section, alias })
      }
  if (found.length === 0) return Either.right({ document, deprecated: [] })
  const copy = structuredClone(document)
  for (const { path, alias } of found) {
    let target = copy as Raw
    for (const part of path) target = target[part] as Raw
    target[alias.canonical] = target[alias.alias]
    delete target[alias.alias]
  }
  return Either.right({
    document: copy,
    deprecated: found.map(({ where, alias }) => ({
      key: `${where}.${alias.alias}`,
      canonical: `${where}.${alias.canonical}`,
    })),
  })
}
