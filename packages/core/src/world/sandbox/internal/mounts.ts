/**
 * The mount plan of a bubblewrap sandbox and the `bwrap` arguments that carry it out.
 *
 * Privilege: always a user namespace (`--unshare-user`), every capability dropped (`--cap-drop ALL`), no further
 * user namespaces (`--disable-userns`), and bubblewrap's `no_new_privs` (which it always sets), so setuid binaries do
 * not raise privileges. No terminal reaches the sandbox: the spawner starts it in a session of its own. The process ids, IPC, UTS,
 * cgroup and — unless shared — network namespaces are the sandbox's own.
 *
 * Mount order (a later mount covers an earlier one):
 *
 * 1. the root filesystem read-only, a minimal `/dev`, a fresh `/proc`, a private `/tmp`;
 * 2. `readable`: paths the sandbox itself needs to read (the egress bridge), read-only;
 * 3. the tree — `writable` (read-write), `read_only`, `hidden.directories` (an empty tmpfs) and `sockets` (read-write
 *    binds of allowed sockets) — parents before children, so the deeper, more specific entry wins; at one path,
 *    hidden wins over read-only over writable;
 * 4. `pinned` directories bound onto themselves (so they cannot be renamed away), then `protected`, read-only: they
 *    win over everything configured;
 * 5. `hidden.files`, each covered with the empty file;
 * 6. the hidden directories remounted read-only (after the binds inside them were made).
 *
 * @since 0.3.0
 */
import * as path from "node:path"

/**
 * What a bubblewrap sandbox may touch.
 *
 * @since 0.3.0
 * @category models
 */
export interface Plan {
  /** Absolute paths bound read-write (the Location first). */
  readonly writable: ReadonlyArray<string>
  /** Absolute paths bound read-only on top of the writable ones (configured `read_only`). */
  readonly readOnly: ReadonlyArray<string>
  /** Share the host's network namespace. */
  readonly network: boolean
  /** The working directory inside the sandbox. */
  readonly cwd: string
  /** Paths bound read-only before the tree (what the sandbox's own helpers need). */
  readonly readable?: ReadonlyArray<string>
  /** Protected paths, bound read-only after everything configured. */
  readonly protected?: ReadonlyArray<string>
  /** Directories bound onto themselves, read-write, before `protected`. */
  readonly pinned?: ReadonlyArray<string>
  /** Existing paths replaced by an empty read-only file or directory. */
  readonly hidden?: { readonly files: ReadonlyArray<string>; readonly directories: ReadonlyArray<string> }
  /** The empty file hidden files are covered with (required when `hidden.files` is not empty). */
  readonly emptyFile?: string
  /** Allowed Unix sockets, bound into the sandbox. */
  readonly sockets?: ReadonlyArray<string>
  /** The uid and gid inside the sandbox (default: the invoking ones). */
  readonly user?: { readonly uid: number; readonly gid: number }
  /** The descriptor bubblewrap reads the seccomp program from. */
  readonly seccompFd?: number
}

const depth = (entry: string): number => entry.split(path.sep).filter((part) => part !== "").length

type Kind = "writable" | "readOnly" | "socket" | "hidden"
const RANK: Readonly<Record<Kind, number>> = { writable: 0, socket: 1, readOnly: 2, hidden: 3 }

/**
 * The `bwrap` arguments for `plan`, followed by `argv` (the command to run).
 *
 * @since 0.3.0
 * @category utilities
 */
export const bubblewrapArgs = (plan: Plan, argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args: Array<string> = [
    "--die-with-parent",
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
  ]
  if (plan.user !== undefined) args.push("--uid", String(plan.user.uid), "--gid", String(plan.user.gid))
  if (plan.network) args.push("--share-net")
  if (plan.seccompFd !== undefined) args.push("--seccomp", String(plan.seccompFd))
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
  for (const entry of plan.readable ?? []) args.push("--ro-bind", entry, entry)

  const tree: Array<{ readonly path: string; readonly kind: Kind }> = [
    ...plan.writable.map((entry) => ({ path: entry, kind: "writable" as const })),
    ...(plan.sockets ?? []).map((entry) => ({ path: entry, kind: "socket" as const })),
    ...plan.readOnly.map((entry) => ({ path: entry, kind: "readOnly" as const })),
    ...(plan.hidden?.directories ?? []).map((entry) => ({ path: entry, kind: "hidden" as const })),
  ]
  const ordered = tree
    .map((entry, index) => ({ ...entry, index }))
    .sort((a, b) => depth(a.path) - depth(b.path) || RANK[a.kind] - RANK[b.kind] || a.index - b.index)
  for (const entry of ordered) {
    if (entry.kind === "hidden") args.push("--tmpfs", entry.path)
    else args.push(entry.kind === "readOnly" ? "--ro-bind" : "--bind", entry.path, entry.path)
  }

  for (const entry of [...(plan.pinned ?? [])].sort((a, b) => depth(a) - depth(b))) args.push("--bind", entry, entry)
  for (const entry of plan.protected ?? []) args.push("--ro-bind", entry, entry)
  const files = plan.hidden?.files ?? []
  if (files.length > 0) {
    if (plan.emptyFile === undefined) throw new Error("hidden files need an empty file")
    for (const entry of files) args.push("--ro-bind", plan.emptyFile, entry)
  }
  for (const entry of plan.hidden?.directories ?? []) args.push("--remount-ro", entry)
  args.push("--chdir", plan.cwd, "--", ...argv)
  return args
}
