/**
 * The `bash` decision for each segment: denied when any of its deny-relevant forms is denied (the command, each
 * wrapper form, every tail of its words — so `flock . rm x` meets `rm * deny` whatever wraps it — each also with its
 * command name cut to the base name), asked as `unresolved:<text>` when it cannot be judged, otherwise decided by
 * its own resource (and, under `sudo`, its outermost form). See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as Wildcard from "../../values/wildcard.js"
import * as ResourcePrefix from "../../values/internal/resource-prefix.js"
import type { Parsed, Segment } from "./segment.js"

/**
 * The resource prefix of a segment that cannot be resolved statically. Only a rule whose resource starts with it can
 * allow such a segment (`bash unresolved:* allow`); `*` or a pattern matching the raw text never does.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNRESOLVED_PREFIX: typeof ResourcePrefix.UNRESOLVED_PREFIX = ResourcePrefix.UNRESOLVED_PREFIX

/**
 * The decision for one segment. `resource` is what the gate is asked about: the form that was denied or asks, the
 * command when allowed, `unresolved:<raw text>` when unresolved. `save` is the pattern an `always` reply saves
 * (absent for unresolved segments, which are never saved).
 *
 * @since 0.3.0
 * @category models
 */
export interface Verdict {
  readonly segment: Segment
  readonly effect: "allow" | "ask" | "deny"
  readonly resource: string
  readonly save?: string
  /** Why it asks beyond the rules themselves. */
  readonly reason?: string
  /** Allowed only because the sandbox is active and `bash.sandbox.auto_allow` is on. */
  readonly sandboxed?: boolean
}

const baseVariant = (form: string): string | undefined => {
  const space = form.indexOf(" ")
  const name = space === -1 ? form : form.slice(0, space)
  const base = path.posix.basename(name.trim())
  if (base === name || base === "") return undefined
  return space === -1 ? base : `${base}${form.slice(space)}`
}

/**
 * The deny-relevant forms of a segment: the command with and without its kept assignments, each wrapper form, every
 * tail of its words from the second on, and each of them with its command name reduced to the base name
 * (`/bin/rm x` → `rm x`). An unresolved segment adds its source text.
 *
 * @since 0.3.0
 * @category utilities
 */
export const forms = (segment: Segment): ReadonlyArray<string> => {
  const out = new Set<string>([segment.command, segment.bare])
  if (segment.unresolved !== undefined) out.add(segment.text)
  for (const wrapper of segment.wrappers) {
    out.add(wrapper)
    const variant = baseVariant(wrapper)
    if (variant !== undefined) out.add(variant)
  }
  // Every tail of the words, each also from the base name of its first word (`" rm"`, `/bin/rm`): a command name
  // anywhere may be what an unmodelled wrapper runs.
  let offset = 0
  for (let i = 0; i < segment.argv.length; i++) {
    const first = segment.argv[i]!.text
    const tail = segment.bare.slice(offset + first.length)
    if (i > 0) out.add(segment.bare.slice(offset))
    const base = path.posix.basename(first.trim())
    if (base !== "" && base !== first) out.add(`${base}${tail}`)
    offset += first.length + 1
  }
  out.delete("")
  return [...out]
}

/**
 * Evaluates the segments of `parsed` (command-less segments, which only redirect, are skipped): a segment is denied
 * when any of its forms is denied; an unresolved one is asked about as `unresolved:<raw text>`; an elevated one
 * (`sudo`) needs its outermost form allowed too; otherwise the command's own effect decides. With `autoAllow` (the
 * sandbox is active), a segment that would only ask runs without asking. `effectOf` answers for one bash resource;
 * `savePattern` gives the `always` pattern of an argv.
 *
 * @since 0.3.0
 * @category utilities
 */
export const evaluate = (
  parsed: Parsed,
  effectOf: (resource: string) => "allow" | "ask" | "deny",
  savePattern: (argv: ReadonlyArray<string>) => string,
  options: { readonly autoAllow?: boolean } = {},
): ReadonlyArray<Verdict> => {
  const out: Array<Verdict> = []
  const sandbox = (verdict: Verdict): Verdict =>
    options.autoAllow === true && verdict.effect === "ask" && verdict.segment.unresolved === undefined
      ? { ...verdict, effect: "allow", sandboxed: true }
      : verdict
  for (const segment of parsed.segments) {
    if (segment.argv.length === 0 && segment.unresolved === undefined) continue
    const denied = forms(segment).find((form) => effectOf(form) === "deny")
    if (denied !== undefined) {
      out.push({ segment, effect: "deny", resource: denied })
      continue
    }
    if (segment.unresolved !== undefined) {
      const resource = `${UNRESOLVED_PREFIX}${segment.text}`
      out.push({ segment, effect: effectOf(resource), resource, reason: segment.unresolved })
      continue
    }
    const outer = segment.elevated ? segment.wrappers[0] : undefined
    if (outer !== undefined && effectOf(outer) !== "allow") {
      out.push(sandbox({ segment, effect: "ask", resource: outer, save: Wildcard.literal(outer) }))
      continue
    }
    out.push(
      sandbox({
        segment,
        effect: effectOf(segment.command),
        resource: segment.command,
        save:
          segment.assignments.length > 0
            ? Wildcard.literal(segment.command)
            : savePattern(segment.argv.map((w) => w.text)),
      }),
    )
  }
  return out
}
