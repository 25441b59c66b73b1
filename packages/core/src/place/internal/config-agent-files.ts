/**
 * Markdown agent files: the `agent/`, `agents/`, `mode/` and `modes/` folders of a configuration directory, each file
 * a YAML front matter decoded as an agent entry and a body that becomes its system prompt. Confined like `read`.
 * `Config` names everything exported here.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as YAML from "yaml"
import * as ConfinedWalk from "../../system/confined-walk.js"
import { type Document, InvalidError } from "./config-document.js"
import { describeIssues } from "./config-issues.js"
import { Agent } from "./config-schema.js"

const SOURCES = [
  { roots: ["agent", "agents"], recursive: true, primary: false },
  { roots: ["mode", "modes"], recursive: false, primary: true },
] as const

/**
 * Something discovery left out, with the reason the user is told.
 *
 * @since 0.2.0
 * @category models
 */
export interface Skipped {
  readonly file: string
  readonly reason: string
}

/** Splits `---` front matter from the body; `undefined` when the front matter is unterminated or not YAML. */
const parseMarkdown = (
  content: string,
): { readonly data: Record<string, unknown>; readonly body: string } | undefined => {
  const text = content.replace(/^\uFEFF/, "")
  const open = /^---[ \t]*\r?\n/.exec(text)
  if (open === null) return { data: {}, body: text }
  const rest = text.slice(open[0].length)
  const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest)
  if (close === null) return undefined
  let data: unknown
  try {
    data = YAML.parse(rest.slice(0, close.index))
  } catch {
    return undefined
  }
  if (data === null || data === undefined) data = {}
  if (typeof data !== "object" || Array.isArray(data)) return undefined
  return { data: data as Record<string, unknown>, body: rest.slice(close.index + close[0].length) }
}

/** Reads one markdown agent file into a configuration document, a reason to skip it, or why it is invalid. */
const markdownDocument = (
  directory: string,
  file: string,
  primary: boolean,
): Document | { readonly skipped: string } | InvalidError => {
  let content: string
  try {
    content = fs.readFileSync(file, "utf8")
  } catch (error) {
    return { skipped: `it cannot be read (${error instanceof Error ? error.message : String(error)})` }
  }
  const markdown = parseMarkdown(content)
  if (markdown === undefined) {
    return new InvalidError({
      path: file,
      message: `Invalid agent file ${file}: its front matter is unterminated or not a YAML mapping`,
    })
  }
  const id = path
    .relative(directory, file)
    .replaceAll("\\", "/")
    .replace(/^(agent|agents|mode|modes)\//, "")
    .replace(/\.md$/, "")
  const decoded = Schema.decodeUnknownEither(Agent)(
    { ...markdown.data, system: markdown.body.trim() },
    { errors: "all", onExcessProperty: "ignore" },
  )
  if (Either.isLeft(decoded)) {
    return new InvalidError({
      path: file,
      message: `Invalid agent file ${file} at ${describeIssues(decoded.left)}`,
    })
  }
  const agent = decoded.right
  return { type: "document", path: file, info: { agents: { [id]: primary ? { ...agent, mode: "primary" } : agent } } }
}

/**
 * The markdown agent files of a configuration directory (`agent/`, `agents/` recursively; `mode/`, `modes/` as
 * primary agents), sorted per pair of folders. Confined like `read` (`ConfinedWalk`): a file or folder whose real
 * path leaves the directory through a symlink is listed in `skipped` and never read. Files whose front matter does
 * not decode as an agent entry are in `invalid` (discovery fails on them; an embedder's directory entry only warns).
 *
 * @since 0.2.0
 * @category utilities
 */
export const agentFiles = (
  directory: string,
): {
  readonly documents: ReadonlyArray<Document>
  readonly skipped: ReadonlyArray<Skipped>
  readonly invalid: ReadonlyArray<InvalidError>
} => {
  const skipped: Array<Skipped> = []
  const invalid: Array<InvalidError> = []
  const onOutside = (outside: ConfinedWalk.Outside) => {
    skipped.push({ file: outside.entry, reason: `it resolves to ${outside.real}, outside ${outside.root}` })
  }
  // Lenient: a missing folder (or configuration directory) contributes nothing.
  const walk = (folder: string, recursive: boolean) =>
    ConfinedWalk.walkSync(path.join(directory, folder), {
      root: directory,
      recursive,
      include: (name) => name.endsWith(".md"),
      lenient: true,
      onOutside,
    })
  const documents = SOURCES.flatMap((source) =>
    source.roots
      .flatMap((folder) => walk(folder, source.recursive))
      .sort()
      .flatMap((file) => {
        const document = markdownDocument(directory, file, source.primary)
        if (document instanceof InvalidError) {
          invalid.push(document)
          return []
        }
        if ("skipped" in document) {
          skipped.push({ file, reason: document.skipped })
          return []
        }
        return [document]
      }),
  )
  return { documents, skipped, invalid }
}
