/**
 * Before/after pictures of the oracle's temporary root: every path below it with its type, mode, owner, content
 * hash (files), link target (symlinks) and modification time (files), and the difference of two pictures
 * as the paths created, changed or removed. A directory's own modification time is left out on purpose: it moves
 * whenever an entry is added or removed, and those entries are reported themselves (a file created and removed again
 * inside one command leaves no trace here; the strace log covers what happens outside the root).
 *
 * Plain Node only: the sandbox runner imports this module too.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** One path's state. */
export interface Entry {
  readonly type: "file" | "directory" | "symlink" | "other" | "unreadable"
  readonly mode: number
  readonly owner: string
  readonly hash?: string
  readonly target?: string
  readonly mtime?: number
}

/** Relative path (POSIX separators, no leading `./`) → its state. */
export type Picture = Readonly<Record<string, Entry>>

/** A path that differs between two pictures. */
export interface Change {
  readonly path: string
  readonly kind: "created" | "changed" | "removed"
  /** What it is after the change (before, for a removal). */
  readonly type: Entry["type"]
}

const hashes = new Map<string, string>()

/**
 * `read()`, and when the mode forbids it (`chmod 000`; the sandbox has no capability to override modes), again with
 * the owner's read and search bits lent for the moment: the mode recorded is the one found.
 */
const readable = <A>(absolute: string, read: () => A): A | undefined => {
  try {
    return read()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EACCES") return undefined
  }
  try {
    const mode = fs.lstatSync(absolute).mode & 0o7777
    fs.chmodSync(absolute, mode | 0o500)
    try {
      return read()
    } finally {
      fs.chmodSync(absolute, mode)
    }
  } catch {
    return undefined
  }
}

const entryOf = (absolute: string, stat: fs.Stats): Entry => {
  const base = { mode: stat.mode & 0o7777, owner: `${stat.uid}:${stat.gid}` }
  if (stat.isSymbolicLink()) return { ...base, type: "symlink", target: fs.readlinkSync(absolute) }
  if (stat.isDirectory()) return { ...base, type: "directory" }
  if (stat.isFile()) {
    try {
      // A write always moves ctime, which no program can set back: an unchanged identity means unchanged bytes.
      const identity = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
      let hash = hashes.get(identity)
      if (hash === undefined) {
        const bytes = readable(absolute, () => fs.readFileSync(absolute))
        if (bytes === undefined) return { ...base, type: "unreadable", mtime: stat.mtimeMs }
        hash = crypto.createHash("sha1").update(bytes).digest("hex")
        if (hashes.size > 100_000) hashes.clear()
        hashes.set(identity, hash)
      }
      return { ...base, type: "file", hash, mtime: stat.mtimeMs }
    } catch {
      return { ...base, type: "unreadable", mtime: stat.mtimeMs }
    }
  }
  return { ...base, type: "other", mtime: stat.mtimeMs }
}

/** The picture of everything below `root` (not following symlinks). */
export const take = (root: string): Picture => {
  const out: Record<string, Entry> = {}
  const walk = (relative: string) => {
    const absolute = relative === "" ? root : path.join(root, relative)
    // A folder the command made unsearchable (`chmod 000`) is lent the owner's bits while it is walked.
    let lent: number | undefined
    let names: Array<string> | undefined
    try {
      names = fs.readdirSync(absolute)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EACCES") {
        try {
          lent = fs.lstatSync(absolute).mode & 0o7777
          fs.chmodSync(absolute, lent | 0o700)
          names = fs.readdirSync(absolute)
        } catch {
          names = undefined
        }
      }
    }
    try {
      if (names === undefined) {
        if (relative !== "") out[relative] = { ...out[relative]!, type: "unreadable" }
        return
      }
      for (const name of names.sort()) {
        const child = relative === "" ? name : `${relative}/${name}`
        let stat: fs.Stats
        try {
          stat = fs.lstatSync(path.join(root, child))
        } catch {
          continue
        }
        out[child] = entryOf(path.join(root, child), stat)
        if (stat.isDirectory()) walk(child)
      }
    } finally {
      if (lent !== undefined) fs.chmodSync(absolute, lent)
    }
  }
  walk("")
  return out
}

/** True when two states are the same. */
export const same = (a: Entry, b: Entry): boolean =>
  a.type === b.type &&
  a.mode === b.mode &&
  a.owner === b.owner &&
  a.hash === b.hash &&
  a.target === b.target &&
  a.mtime === b.mtime

/** True when two pictures show the same paths in the same states. */
export const equal = (a: Picture, b: Picture): boolean => {
  const names = Object.keys(a)
  if (names.length !== Object.keys(b).length) return false
  return names.every((name) => b[name] !== undefined && same(a[name]!, b[name]!))
}

/** What changed from `before` to `after`, sorted by path. */
export const diff = (before: Picture, after: Picture): ReadonlyArray<Change> => {
  const out: Array<Change> = []
  for (const [name, entry] of Object.entries(after)) {
    const old = before[name]
    if (old === undefined) out.push({ path: name, kind: "created", type: entry.type })
    else if (!same(old, entry)) out.push({ path: name, kind: "changed", type: entry.type })
  }
  for (const [name, entry] of Object.entries(before)) {
    if (after[name] === undefined) out.push({ path: name, kind: "removed", type: entry.type })
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
