/**
 * The oracle's rule, for a command the gate neither refused nor left unresolved:
 *
 * - every program the shell really executed (the base name of each successful `execve`, minus the shell the
 *   harness started) is among the gate's programs, or the gate recognises it (`Gate.knows`: a deny on it would
 *   refuse or ask). Builtins never `execve`, so `cd`, `echo` or `exec` itself are no programs here; an `exec`'s
 *   command is one;
 * - every file created, changed or removed is covered by a write resource of the gate: in the project by an `edit`
 *   or `protected_path` resource (a protected path — configuration, `.toolgate/**`, `.git/**` — by a
 *   `protected_path` one), elsewhere (the outside folder, the fake home, `/tmp`, the host's read-only root) by an
 *   `external_directory` resource. A resource covers its own path and everything below it, and a directory created
 *   on the way to it (`mkdir -p`). A write ask about files the gate cannot name (`edit unresolved:…`, which always
 *   asks) covers every change.
 *
 * Changes come from the before/after pictures of the temporary root and, for what lies outside it or was refused
 * by the sandbox (a read-only root, dropped capabilities), from the strace log.
 */
import * as path from "node:path"
import { Effect } from "effect"
import { isProtected, within, type Workspace } from "./fixture.js"
import type { Gate, View, WriteResource } from "./gate.js"
import type { Reply } from "./sandbox.js"
import * as Trace from "./trace.js"

/** A change the gate did not cover. */
export interface Uncovered {
  readonly path: string
  readonly kind: string
  /** What would have covered it. */
  readonly needs: "edit" | "protected_path" | "external_directory"
}

/** A change (not a creation) of the project's `.git/index` by a command that ran git: the documented refresh. */
const gitIndexRefresh = (space: Workspace, target: string, created: boolean, executed: ReadonlyArray<string>) =>
  !created && target === path.join(space.project, ".git", "index") && executed.includes("git")

/** The comparison of one command. */
export interface Verdict {
  readonly status: "pass" | "refused" | "unresolved" | "fail"
  readonly executed: ReadonlyArray<string>
  readonly missingPrograms: ReadonlyArray<string>
  readonly uncovered: ReadonlyArray<Uncovered>
  /** Set when the gate failed in another way (a defect, an unexpected error) or the run could not be judged. */
  readonly problem?: string
}

/** Writes outside the temporary root that are the machinery's, not the command's. */
const PLUMBING = [
  /^\/dev\/(null|zero|full|random|urandom|tty\d*|console|ptmx)$/,
  /^\/dev\/pts(\/|$)/,
  /^\/proc\/\d+\/fd(\/|$)/,
  /^\/tmp\/sh-thd/,
]

const covers = (resource: WriteResource, target: string, created: boolean, directory: boolean): boolean =>
  within(resource.absolute, target) || (created && directory && within(target, resource.absolute))

/** The changes a run made, each with what it needs. */
export const changes = (space: Workspace, reply: Reply, trace: Trace.Trace) => {
  const out = new Map<string, { kind: string; created: boolean; directory: boolean }>()
  for (const change of reply.changes) {
    out.set(path.join(space.root, change.path), {
      kind: `${change.kind} ${change.type}`,
      created: change.kind === "created",
      directory: change.type === "directory",
    })
  }
  for (const write of trace.writes) {
    const inside = within(space.root, write.path)
    // Inside the root the pictures show what happened; only what the sandbox refused is missing from them.
    if (inside && write.succeeded) continue
    if (!inside && PLUMBING.some((pattern) => pattern.test(write.path))) continue
    if (!out.has(write.path)) {
      out.set(write.path, {
        kind: `${write.call}${write.succeeded ? "" : " (refused by the sandbox)"}`,
        created: false,
        directory: false,
      })
    }
  }
  return out
}

/** Compares the gate's `view` of a command with what `reply` shows the shell did. */
export const compare = (
  space: Workspace,
  gate: Gate,
  command: string,
  view: View,
  reply: Reply,
): Effect.Effect<Verdict> =>
  Effect.gen(function* () {
    const none = { executed: [], missingPrograms: [], uncovered: [] }
    if (view.outcome === "refused") return { status: "refused", ...none }
    if (view.unresolved.length > 0) return { status: "unresolved", ...none }
    if (view.outcome === "failed") return { status: "fail", ...none, problem: `the gate failed: ${view.text}` }
    if (reply.error !== undefined) return { status: "fail", ...none, problem: `the runner failed: ${reply.error}` }
    const trace = Trace.read(reply.trace, view.spawned?.cwd ?? space.project)
    const executed = [...new Set(trace.execs.map((e) => e.program))]
    const missingPrograms: Array<string> = []
    for (const program of executed) {
      if (view.programs.includes(program)) continue
      if (yield* gate.knows(command, program)) continue
      missingPrograms.push(program)
    }
    const uncovered: Array<Uncovered> = []
    for (const [target, change] of view.unknownWrites.length > 0 ? [] : changes(space, reply, trace)) {
      const inProject = within(space.project, target)
      const needs = !inProject ? "external_directory" : isProtected(space, target) ? "protected_path" : "edit"
      const accepted = view.writes.filter((w) =>
        needs === "edit" ? w.action === "edit" || w.action === "protected_path" : w.action === needs,
      )
      if (accepted.some((w) => covers(w, target, change.created, change.directory))) continue
      // docs/shell.md, limits: git's porcelain (`git diff`) may rewrite the stat data of `.git/index`, which the gate
      // does not ask for. The fixture's config normally keeps git from doing it; a command that rewrites that config
      // first (`… > .git/config`, itself a protected_path ask) brings the documented rewrite back.
      if (gitIndexRefresh(space, target, change.created, executed)) continue
      uncovered.push({ path: target, kind: change.kind, needs })
    }
    const status = missingPrograms.length > 0 || uncovered.length > 0 ? "fail" : "pass"
    return { status, executed, missingPrograms, uncovered }
  })
