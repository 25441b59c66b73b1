/**
 * Wrappers: commands that run another command given as their arguments (`sudo`, `env`, `nice`, `timeout`,
 * `flock`, `xargs`, …), each with the options the gate models. An option outside the model, or a wrapper the gate
 * knows runs commands in a way it does not follow (`chroot`, `parallel`, `su`, `systemd-run`, …), makes the segment
 * unresolved. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "./options.js"
import { type Effects, noEffects, use } from "./segment.js"
import type { Grammar } from "./shells.js"
import { join, literal, type Word } from "./words.js"

/**
 * What a wrapper does with its arguments.
 *
 * @since 0.3.0
 * @category models
 */
export type Unwrap =
  | {
      readonly kind: "run"
      /** The index of the wrapped command in the words (`words.length` with a `fallback`). */
      readonly at: number
      /** Runs this instead when no command is given (`xargs` runs `echo`). */
      readonly fallback?: ReadonlyArray<Word>
      /** `NAME=value` words before the command (`env`, `sudo`). */
      readonly assignments?: ReadonlyArray<Word>
      readonly effects?: Effects
      readonly elevated?: boolean
      /** `xargs -I R`: words containing R are filled in at run time. */
      readonly replace?: string
      /** `xargs` without `-I`: arguments read from standard input are appended. */
      readonly appended?: boolean
      /** The command runs in another directory that is only known at run time (`find -execdir`). */
      readonly elsewhere?: string
    }
  | { readonly kind: "string"; readonly body: Word; readonly grammar: Grammar; readonly effects?: Effects }
  | { readonly kind: "none"; readonly effects?: Effects }
  | { readonly kind: "unresolved"; readonly reason: string }

const unknownOption = (name: string, option: string): Unwrap => ({
  kind: "unresolved",
  reason: `${name} ${option} is an option the gate does not model`,
})

/** Options, then `NAME=value` words (`env`, `sudo`), then the command. */
const assignmentsFrom = (words: ReadonlyArray<Word>, from: number) => {
  const assignments: Array<Word> = []
  let i = from
  while (i < words.length && words[i]!.literal && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!.text)) {
    assignments.push(words[i]!)
    i++
  }
  return { assignments, at: i }
}

/** A plain wrapper: POSIX options, `positional` operands to skip, then the command. */
const simple =
  (spec: Options.Spec, options: { readonly positional?: number; readonly elevated?: boolean } = {}) =>
  (words: ReadonlyArray<Word>): Unwrap => {
    const parsed = Options.parse(words, 1, { ...spec, posix: true })
    if (parsed.unknown !== undefined) return unknownOption(words[0]!.text, parsed.unknown)
    const at = parsed.rest + (options.positional ?? 0)
    if (at >= words.length) return { kind: "none" }
    return { kind: "run", at, ...(options.elevated === true ? { elevated: true } : {}) }
  }

/** The words of `env -S STRING`, split as env splits them, when they hold nothing but plain characters. */
const envSplit = (value: Word): ReadonlyArray<Word> | undefined => {
  if (!value.literal || !/^[A-Za-z0-9_./=,:@%+\- \t]*$/.test(value.text)) return undefined
  return value.text
    .split(/[ \t]+/)
    .filter((part) => part !== "")
    .map(literal)
}

const env = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "i0v",
    values: "uSCa",
    long: ["ignore-environment", "null", "debug", "list-signal-handling"],
    longValues: ["unset", "split-string", "chdir", "argv0"],
    longOptional: ["block-signal", "default-signal", "ignore-signal"],
  })
  if (parsed.unknown !== undefined) return unknownOption("env", parsed.unknown)
  if (Options.has(parsed, "C", "chdir")) {
    return { kind: "unresolved", reason: "env -C runs the command in another directory, which is not followed" }
  }
  if (Options.has(parsed, "a", "argv0")) return { kind: "unresolved", reason: "env -a renames the command it runs" }
  const { assignments, at } = assignmentsFrom(words, parsed.rest)
  const split = Options.valuesOf(parsed, "S", "split-string")
  if (split.length > 0) {
    const parts = split.length === 1 ? envSplit(split[0]!) : undefined
    if (parts === undefined) return { kind: "unresolved", reason: "env -S splits a string the gate does not read" }
    // The split string may itself open with `NAME=value` words: env applies them like the ones outside it.
    const argv = [...parts, ...words.slice(at)]
    const inside = assignmentsFrom(argv, 0)
    if (inside.at >= argv.length) return { kind: "none" }
    return {
      kind: "run",
      at: words.length,
      fallback: argv.slice(inside.at),
      assignments: [...assignments, ...inside.assignments],
    }
  }
  if (at >= words.length) return { kind: "none" }
  return { kind: "run", at, assignments }
}

const sudo = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "AbEHnPSkB",
    values: "ugprtTCh",
    long: [
      "askpass",
      "background",
      "bell",
      "set-home",
      "non-interactive",
      "preserve-groups",
      "stdin",
      "reset-timestamp",
    ],
    longValues: ["user", "group", "prompt", "role", "type", "command-timeout", "close-from", "host"],
    longOptional: ["preserve-env"],
  })
  if (parsed.unknown !== undefined) return unknownOption("sudo", parsed.unknown)
  if (Options.has(parsed, "h", "host", "C", "close-from", "T", "command-timeout")) {
    return { kind: "unresolved", reason: "sudo runs the command in a way the gate does not follow" }
  }
  const { assignments, at } = assignmentsFrom(words, parsed.rest)
  if (at >= words.length) return { kind: "none" }
  return { kind: "run", at, assignments, elevated: true }
}

const xargs = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "0rtpxo",
    values: "adEILnPs",
    optional: "eil",
    long: ["null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"],
    longValues: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
    longOptional: ["eof", "replace", "max-lines"],
  })
  if (parsed.unknown !== undefined) return unknownOption("xargs", parsed.unknown)
  const effects = noEffects()
  for (const file of Options.valuesOf(parsed, "a", "arg-file")) effects.reads.push(use(file, `xargs -a ${file.text}`))
  const named = Options.valuesOf(parsed, "I")
  const implied = parsed.options.find((option) => option.name === "i" || option.name === "replace")
  const replace = named[0]?.text ?? (implied === undefined ? undefined : (implied.value?.text ?? "{}"))
  const fallback = parsed.rest >= words.length ? [literal("echo")] : undefined
  return {
    kind: "run",
    at: parsed.rest,
    effects,
    ...(fallback === undefined ? {} : { fallback }),
    ...(replace === undefined ? { appended: true } : { replace }),
  }
}

const time = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "apqvV",
    values: "fo",
    long: ["append", "portability", "quiet", "verbose"],
    longValues: ["format", "output"],
  })
  if (parsed.unknown !== undefined) return unknownOption("time", parsed.unknown)
  const effects = noEffects()
  for (const file of Options.valuesOf(parsed, "o", "output")) effects.writes.push(use(file, `time -o ${file.text}`))
  if (parsed.rest >= words.length) return { kind: "none", effects }
  return { kind: "run", at: parsed.rest, effects }
}

const flock = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "sxunoFe",
    values: "wEc",
    long: ["shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "verbose"],
    longValues: ["timeout", "wait", "conflict-exit-code", "command"],
  })
  if (parsed.unknown !== undefined) return unknownOption("flock", parsed.unknown)
  const file = words[parsed.rest]
  if (file === undefined) return { kind: "none" }
  const effects = noEffects()
  // A lock file is created when it does not exist; a bare number names a descriptor.
  if (!(file.literal && /^\d+$/.test(file.text))) effects.writes.push(use(file, `flock ${file.text}`))
  const command = Options.valuesOf(parsed, "c", "command")[0]
  if (command !== undefined) return { kind: "string", body: command, grammar: "posix", effects }
  if (parsed.rest + 1 < words.length && words[parsed.rest + 1]!.literal && words[parsed.rest + 1]!.text === "-c") {
    const body = words[parsed.rest + 2]
    if (body === undefined) return { kind: "none", effects }
    return { kind: "string", body, grammar: "posix", effects }
  }
  if (parsed.rest + 1 >= words.length) return { kind: "none", effects }
  return { kind: "run", at: parsed.rest + 1, effects }
}

const watch = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "tbegcxpwr",
    values: "nq",
    optional: "d",
    long: ["no-title", "beep", "errexit", "chgexit", "color", "no-color", "exec", "precise", "no-wrap", "no-rerun"],
    longValues: ["interval", "equexit"],
    longOptional: ["differences"],
  })
  if (parsed.unknown !== undefined) return unknownOption("watch", parsed.unknown)
  if (parsed.rest >= words.length) return { kind: "none" }
  if (Options.has(parsed, "x", "exec")) return { kind: "run", at: parsed.rest }
  // Without -x, watch hands its words, joined by spaces, to `sh -c`.
  const rest = words.slice(parsed.rest)
  const body = rest.every((w) => w.literal) ? literal(join(rest)) : { text: join(rest), literal: false, glob: false }
  return { kind: "string", body, grammar: "posix" }
}

const busybox = (words: ReadonlyArray<Word>): Unwrap => {
  const applet = words[1]
  if (applet === undefined || (applet.literal && applet.text.startsWith("-"))) return { kind: "none" }
  return { kind: "run", at: 1 }
}

const runuser = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "mp",
    values: "ugGw",
    long: ["preserve-environment"],
    longValues: ["user", "group", "supp-group", "whitelist-environment"],
  })
  if (parsed.unknown !== undefined || !Options.has(parsed, "u", "user")) {
    return { kind: "unresolved", reason: "runuser runs a command through another user's shell, which is not followed" }
  }
  if (parsed.rest >= words.length) return { kind: "none" }
  return { kind: "run", at: parsed.rest, elevated: true }
}

const strace = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "cCdDfFhiknNqrtTvVwxyzZ",
    values: "abeEIoOPsSuUX",
    long: ["summary-only", "summary", "follow-forks", "output-separately", "quiet", "no-abbrev", "decode-fds"],
    longValues: ["expr", "trace", "signal", "output", "string-limit", "env", "user", "trace-path", "status"],
  })
  if (parsed.unknown !== undefined) return unknownOption("strace", parsed.unknown)
  if (Options.has(parsed, "p", "P")) return unknownOption("strace", "-p")
  const effects = noEffects()
  const separate =
    Options.has(parsed, "ff", "output-separately") || parsed.options.filter((o) => o.name === "f").length > 1
  for (const file of Options.valuesOf(parsed, "o", "output")) {
    effects.writes.push(
      separate
        ? { ...use(file, `strace -o ${file.text}`), unknown: "strace -ff writes one file per process" }
        : use(file, `strace -o ${file.text}`),
    )
  }
  const assignments = Options.valuesOf(parsed, "E", "env")
  if (parsed.rest >= words.length) return { kind: "none", effects }
  return {
    kind: "run",
    at: parsed.rest,
    effects,
    assignments,
    ...(Options.has(parsed, "u", "user") ? { elevated: true } : {}),
  }
}

const setpriv = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "d",
    long: ["clear-groups", "keep-groups", "init-groups", "nnp", "no-new-privs", "reset-env", "dump"],
    longValues: [
      "reuid",
      "regid",
      "ruid",
      "euid",
      "rgid",
      "egid",
      "groups",
      "inh-caps",
      "ambient-caps",
      "bounding-set",
      "securebits",
      "pdeathsig",
      "selinux-label",
      "apparmor-profile",
    ],
  })
  if (parsed.unknown !== undefined) return unknownOption("setpriv", parsed.unknown)
  if (Options.has(parsed, "d", "dump") || parsed.rest >= words.length) return { kind: "none" }
  const elevated = Options.has(parsed, "reuid", "ruid", "euid", "regid", "rgid", "egid")
  return { kind: "run", at: parsed.rest, ...(elevated ? { elevated: true } : {}) }
}

const command = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, { posix: true, flags: "pvV" })
  if (parsed.unknown !== undefined) return unknownOption("command", parsed.unknown)
  if (Options.has(parsed, "v", "V") || parsed.rest >= words.length) return { kind: "none" }
  return { kind: "run", at: parsed.rest }
}

const exec = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, { posix: true, flags: "cl", values: "a" })
  if (parsed.unknown !== undefined) return unknownOption("exec", parsed.unknown)
  if (Options.has(parsed, "a")) return { kind: "unresolved", reason: "exec -a renames the command it runs" }
  if (parsed.rest >= words.length) return { kind: "none" }
  return { kind: "run", at: parsed.rest }
}

const taskset = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, { posix: true, flags: "ac", long: ["all-tasks", "cpu-list"] })
  if (parsed.unknown !== undefined) return unknownOption("taskset", parsed.unknown)
  return parsed.rest + 1 >= words.length ? { kind: "none" } : { kind: "run", at: parsed.rest + 1 }
}

const chrt = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "abdfiorRv",
    values: "TPD",
    long: ["all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose"],
    longValues: ["sched-runtime", "sched-period", "sched-deadline"],
  })
  if (parsed.unknown !== undefined) return unknownOption("chrt", parsed.unknown)
  return parsed.rest + 1 >= words.length ? { kind: "none" } : { kind: "run", at: parsed.rest + 1 }
}

const unshare = (words: ReadonlyArray<Word>): Unwrap => {
  const parsed = Options.parse(words, 1, {
    posix: true,
    flags: "frcUmuinpCT",
    long: [
      "fork",
      "map-root-user",
      "map-current-user",
      "user",
      "mount",
      "uts",
      "ipc",
      "net",
      "pid",
      "cgroup",
      "time",
      "keep-caps",
    ],
    longValues: ["propagation", "setgroups"],
    longOptional: ["kill-child", "mount-proc"],
  })
  if (parsed.unknown !== undefined) return unknownOption("unshare", parsed.unknown)
  if (parsed.rest >= words.length) return { kind: "unresolved", reason: "unshare without a command runs $SHELL" }
  return { kind: "run", at: parsed.rest }
}

/**
 * The wrappers the gate unwraps, by command name.
 *
 * @since 0.3.0
 * @category constants
 */
export const WRAPPERS: ReadonlyMap<string, (words: ReadonlyArray<Word>) => Unwrap> = new Map<
  string,
  (words: ReadonlyArray<Word>) => Unwrap
>([
  ["command", command],
  ["builtin", (words) => (words.length > 1 ? { kind: "run", at: 1 } : { kind: "none" })],
  ["exec", exec],
  ["nohup", simple({})],
  ["time", time],
  ["nice", simple({ values: "n", longValues: ["adjustment"], numeric: "n" })],
  ["env", env],
  ["sudo", sudo],
  ["doas", simple({ flags: "n", values: "u" }, { elevated: true })],
  ["xargs", xargs],
  [
    "timeout",
    simple(
      {
        flags: "v",
        values: "ks",
        long: ["foreground", "preserve-status", "verbose"],
        longValues: ["kill-after", "signal"],
      },
      { positional: 1 },
    ),
  ],
  ["stdbuf", simple({ values: "ioe", longValues: ["input", "output", "error"] })],
  ["setsid", simple({ flags: "cfw", long: ["ctty", "fork", "wait"] })],
  ["ionice", simple({ flags: "t", values: "cn", long: ["ignore"], longValues: ["class", "classdata"] })],
  ["watch", watch],
  ["flock", flock],
  ["taskset", taskset],
  ["chrt", chrt],
  ["unshare", unshare],
  ["strace", strace],
  ["setpriv", setpriv],
  ["runuser", runuser],
  ["busybox", busybox],
  ["fakeroot", simple({})],
  ["eatmydata", simple({})],
  ["nocache", simple({})],
  ["setarch", simple({ flags: "vRFZLXBIST3", long: ["verbose", "addr-no-randomize", "uname-2.6"] }, { positional: 1 })],
  // Scripts that run `grep -E` / `grep -F` with their words.
  [
    "egrep",
    (words) => ({ kind: "run", at: words.length, fallback: [literal("grep"), literal("-E"), ...words.slice(1)] }),
  ],
  [
    "fgrep",
    (words) => ({ kind: "run", at: words.length, fallback: [literal("grep"), literal("-F"), ...words.slice(1)] }),
  ],
])
