/**
 * The generator of the oracle's commands: a grammar of shell constructs over the fixture's files, every class of
 * construct that escaped a line-by-line gate (see the class names below), combined and nested with lists,
 * pipelines, subshells, groups, control structures, substitutions and nested shells, plus plain benign commands.
 *
 * A case is its text and the classes of the constructs it was built from (for grouping failures). Inside a choice
 * the first option is the plainest one, so shrinking lands on the smallest command that still fails.
 */
import { FastCheck as fc } from "effect"
import type { Workspace } from "./fixture.js"

/** One generated command. */
export interface Case {
  readonly text: string
  readonly classes: ReadonlyArray<string>
}

type Arb = fc.Arbitrary<Case>

const plain = (text: string, ...classes: Array<string>): Case => ({ text, classes })
const join = (text: string, ...parts: ReadonlyArray<Case>): Case => ({
  text,
  classes: [...new Set(parts.flatMap((p) => p.classes))],
})
const tag = (c: Case, ...classes: Array<string>): Case => ({
  text: c.text,
  classes: [...new Set([...classes, ...c.classes])],
})

/** `text` as one single-quoted shell word. */
export const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

const pick = (...items: ReadonlyArray<string>) => fc.constantFrom(...items)

/** Every choice may shrink to an earlier option (`ls` before `touch`), so shrunk commands are the plainest. */
const CROSS = { withCrossShrink: true } as const

/** The class names, for reports. */
export const CLASSES = [
  "benign",
  "file-changer",
  "redirect-compound",
  "redirect-heredoc",
  "redirect-function",
  "redirect-operator",
  "dev-fd",
  "line-continuation",
  "link-then-write",
  "cd-subshell",
  "cd-failing",
  "cd-dashdash",
  "cdpath",
  "pushd-popd",
  "shell-options",
  "env-split",
  "trap",
  "alias",
  "xargs-sh",
  "bash-env",
  "source",
  "dash-bash",
  "assignment",
  "wrapper-in-table",
  "wrapper-outside-table",
  "find-exec-xargs",
  "nested-shell",
  "deep-nesting",
] as const

/** The generator over `space`'s files (absolute paths are the workspace's). */
export const cases = (space: Workspace): Arb => {
  const existing = pick("notes.txt", "README.md", "src/main.ts", "sub/a.txt", "sub/deep/b.txt", "list.txt")
  const fresh = pick("new.txt", "sub/new.txt", "out.log", "src/gen.ts")
  const guarded = pick(
    ".git/config",
    ".git/description",
    ".git/hooks/pre-commit",
    "toolgate.json",
    ".toolgate/agents/evil.md",
    ".toolgate/x.json",
  )
  const away = pick(
    "../outside/o.txt",
    "../outside/new.txt",
    "../outside/dir/inner.txt",
    `${space.outside}/abs.txt`,
    "../home/h.txt",
    "~/h2.txt",
    "/var/tmp/oracle.txt",
    "/dev/shm/oracle.txt",
  )
  const file = fc.oneof(
    CROSS,
    { arbitrary: fresh, weight: 3 },
    { arbitrary: existing, weight: 3 },
    { arbitrary: guarded, weight: 2 },
    { arbitrary: away, weight: 2 },
  )
  const directory = pick("sub", "src", "sub/deep", ".", ".git", ".toolgate", "../outside", "..", "/tmp", "missing")
  const newDirectory = pick("newdir", "sub/newdir", ".git/newdir", "../outside/newdir", "newdir/a/b")
  /** A word as the shell reads it, written in one of several spellings. */
  const spelled = (word: fc.Arbitrary<string>) =>
    fc.tuple(word, fc.nat(4)).map(([w, how]) => {
      if (how === 0 || w.startsWith("~")) return w
      if (how === 1) return quote(w)
      if (how === 2) return `"${w}"`
      if (how === 3) return w.length > 1 ? `${w[0]}''${w.slice(1)}` : w
      return w.length > 1 ? `${w[0]}\\${w.slice(1)}` : w
    })

  // Plain commands over the fixture.
  const reader: Arb = fc.oneof(
    CROSS,
    fc.constant(plain("ls", "benign")),
    spelled(directory).map((d) => plain(`ls -la ${d}`, "benign")),
    spelled(existing).map((f) => plain(`cat ${f}`, "benign")),
    spelled(existing).map((f) => plain(`head -n 1 ${f}`, "benign")),
    spelled(existing).map((f) => plain(`wc -l ${f}`, "benign")),
    pick("echo hello", "printf '%s\\n' a b", "pwd", "true", "date +%Y", "id -u").map((t) => plain(t, "benign")),
    pick("git status --short", "git log --oneline -1", "git diff --stat", "git rev-parse HEAD").map((t) =>
      plain(t, "benign"),
    ),
    spelled(directory).map((d) => plain(`find ${d} -maxdepth 1 -name '*.txt'`, "benign")),
    spelled(existing).map((f) => plain(`grep -n a ${f}`, "benign")),
  )
  const changer: Arb = fc.oneof(
    CROSS,
    spelled(file).map((f) => plain(`touch ${f}`, "file-changer")),
    spelled(file).map((f) => plain(`rm -f ${f}`, "file-changer")),
    spelled(newDirectory).map((d) => plain(`mkdir -p ${d}`, "file-changer")),
    spelled(directory).map((d) => plain(`rm -rf ${d}/*.txt`, "file-changer")),
    fc.tuple(spelled(existing), spelled(file)).map(([a, b]) => plain(`cp ${a} ${b}`, "file-changer")),
    fc.tuple(spelled(existing), spelled(file)).map(([a, b]) => plain(`mv ${a} ${b}`, "file-changer")),
    fc.tuple(spelled(file), spelled(fresh)).map(([a, b]) => plain(`ln -s ${a} ${b}`, "file-changer")),
    fc.tuple(spelled(existing), spelled(fresh)).map(([a, b]) => plain(`ln ${a} ${b}`, "file-changer")),
    spelled(existing).map((f) => plain(`sed -i s/a/b/ ${f}`, "file-changer")),
    fc.tuple(pick("tee", "tee -a"), spelled(file)).map(([t, f]) => plain(`echo x | ${t} ${f}`, "file-changer")),
    spelled(file).map((f) => plain(`chmod 600 ${f}`, "file-changer")),
    spelled(file).map((f) => plain(`truncate -s 0 ${f}`, "file-changer")),
    spelled(file).map((f) => plain(`dd if=/dev/zero of=${f} bs=1 count=1 status=none`, "file-changer")),
    fc.tuple(spelled(existing), spelled(file)).map(([a, b]) => plain(`install -m 644 ${a} ${b}`, "file-changer")),
    fc.tuple(spelled(file), spelled(existing)).map(([a, b]) => plain(`tar -cf ${a} ${b}`, "file-changer")),
    spelled(directory).map((d) => plain(`rmdir ${d}`, "file-changer")),
  )
  const simple: Arb = fc.oneof(CROSS, { arbitrary: reader, weight: 3 }, { arbitrary: changer, weight: 2 })

  // Redirections.
  const operator = pick(">", ">>", "2>", ">|", "&>", "1<>", "3>", ">&")
  const redirect: Arb = fc
    .tuple(simple, operator, spelled(file))
    .map(([c, op, f]) => tag(plain(`${c.text} ${op}${op === ">&" ? "" : " "}${f}`, ...c.classes), "redirect-operator"))
  const devFd: Arb = fc
    .tuple(pick("/dev/fd/../cwd/", "/proc/self/cwd/", "/dev/fd/1/../../self/cwd/"), fc.oneof(CROSS, fresh, guarded))
    .map(([prefix, f]) => plain(`echo x > ${prefix}${f}`, "dev-fd"))
  const continued: Arb = fc.tuple(fc.oneof(CROSS, fresh, guarded, away), fc.nat(100)).map(([f, at]) => {
    const cut = 1 + (at % Math.max(1, f.length - 1))
    return plain(`echo x > ${f.slice(0, cut)}\\\n${f.slice(cut)}`, "line-continuation")
  })
  const heredoc: Arb = fc
    .tuple(pick("cat <<'EOF' > FILE", "cat > FILE <<EOF", "cat <<-EOF >> FILE", "tee FILE <<EOF"), spelled(file))
    .map(([form, f]) => plain(`${form.replace("FILE", f)}\nhello\nEOF`, "redirect-heredoc"))

  const lists = <A extends Case>(inner: fc.Arbitrary<A>): Arb =>
    fc
      .tuple(inner, pick("; ", " && ", " || ", " | ", "\n", " & "), inner)
      .map(([a, sep, b]) => join(`${a.text}${sep}${b.text}${sep === " & " ? "; wait" : ""}`, a, b))

  return fc.letrec<{ command: Case; leaf: Case }>((tie) => {
    const command = tie("command")
    const leaf = tie("leaf")
    const wrapped = (c: Case, prefix: string, ...classes: Array<string>) =>
      tag(plain(`${prefix}${c.text}`, ...c.classes), ...classes)

    const compoundRedirect: Arb = fc
      .tuple(
        pick(
          "{ BODY; }",
          "( BODY )",
          "if true; then BODY; fi",
          "for i in 1; do BODY; done",
          "case a in a) BODY;; esac",
        ),
        leaf,
        spelled(file),
      )
      .map(([form, c, f]) => tag(join(`${form.replace("BODY", c.text)} > ${f}`, c), "redirect-compound"))
    const functionRedirect: Arb = fc
      .tuple(pick("f() { BODY; } > FILE; f", "f() ( BODY ) > FILE; f", "f() { BODY; }; f > FILE"), leaf, spelled(file))
      .map(([form, c, f]) => tag(join(form.replace("BODY", c.text).replace("FILE", f), c), "redirect-function"))
    const link: Arb = fc
      .tuple(
        pick(
          "ln -s ../outside l && echo x > l/f",
          "ln -s .git g && echo x > g/config",
          "ln -s ../outside/o.txt lf; echo x >> lf",
          "ln -sf toolgate.json t; echo '{}' > t",
          "mkdir d; ln -s ../../outside d/up; echo x > d/up/f",
          "ln -s .toolgate tg && touch tg/agents/x.md",
          "cp -s ../outside/o.txt cs && echo x > cs",
        ),
      )
      .map(([t]) => plain(t, "link-then-write"))
    const relativeWrite = pick("echo x > w.txt", "touch w.txt", "rm -f o.txt", "echo x > ../w.txt", "rm -f a.txt")
    const cd: Arb = fc.oneof(
      CROSS,
      fc
        .tuple(spelled(pick("sub", "../outside", "..", "src", "/tmp", ".git")), relativeWrite)
        .map(([d, w]) => plain(`cd ${d}; ${w}`, "cd-subshell")),
      fc
        .tuple(pick("../outside", "sub", ".git", ".."), relativeWrite)
        .map(([d, w]) => plain(`(cd ${d}; ls); ${w}`, "cd-subshell")),
      fc
        .tuple(pick("../outside", ".git", "sub"), relativeWrite)
        .map(([d, w]) => plain(`(cd ${d} && ${w})`, "cd-subshell")),
      relativeWrite.map((w) => plain(`cd missing; ${w}`, "cd-failing")),
      fc
        .tuple(pick("../outside", ".git", "sub"), relativeWrite)
        .map(([d, w]) => plain(`cd -- ${d}; ${w}`, "cd-dashdash")),
      relativeWrite.map((w) => plain(`CDPATH=.. cd outside; ${w}`, "cdpath")),
      relativeWrite.map((w) => plain(`CDPATH=..; cd outside >/dev/null; ${w}`, "cdpath")),
      fc
        .tuple(pick("../outside", ".git", "sub"), relativeWrite)
        .map(([d, w]) => plain(`pushd ${d}; popd; ${w}`, "pushd-popd")),
      fc
        .tuple(pick("../outside", ".git", "sub"), relativeWrite)
        .map(([d, w]) => plain(`pushd ${d} >/dev/null; ${w}; popd`, "pushd-popd")),
      relativeWrite.map((w) => plain(`cd; ${w}`, "cd-subshell")),
    )
    const shellOptions: Arb = fc
      .tuple(
        pick(
          "bash --norc -c",
          "bash --noprofile -c",
          "bash -o posix -c",
          "bash --login -c",
          "sh -e -c",
          "sh -ec",
          "bash -x -c",
          "bash -O extglob -c",
          "dash -c",
          "bash -c",
          "sh -c",
        ),
        leaf,
      )
      .map(([shell, c]) =>
        wrapped(
          plain(quote(c.text), ...c.classes),
          `${shell} `,
          /^\w+ -c$/.test(shell) ? "nested-shell" : "shell-options",
        ),
      )
    const envSplit: Arb = fc
      .tuple(pick("env -S", "env -vS", "env -iS", "env --split-string="), leaf)
      .map(([env, c]) => wrapped(plain(quote(`PATH=/usr/bin:/bin ${c.text}`), ...c.classes), env, "env-split"))
    const textRun: Arb = fc.oneof(
      CROSS,
      leaf.map((c) => wrapped(plain(`${quote(c.text)} EXIT`, ...c.classes), "trap ", "trap")),
      leaf.map((c) => tag(join(`alias x=${quote(c.text)}\nx`, c), "alias")),
      pick(
        "xargs -I{} sh -c {} < cmds.txt",
        "cat cmds.txt | xargs -I{} sh -c '{}'",
        "xargs -I% bash -c % < cmds.txt",
      ).map((t) => plain(t, "xargs-sh")),
      pick(
        "BASH_ENV=/dev/stdin bash -c ls <<EOF\ntouch bash-env\nEOF",
        "BASH_ENV=hook.sh bash -c true",
        "ENV=./hook.sh sh -i -c true",
        "SHELLOPTS=xtrace PS4='$(touch ps4)' bash -c true",
        "PS4='$(touch ps4)'; set -x; true",
      ).map((t) => plain(t, "bash-env")),
      pick(". ./hook.sh", "source hook.sh", 'eval "$(cat cmds.txt)"').map((t) => plain(t, "source")),
    )
    const divergent: Arb = pick(
      "((touch arith))",
      "((ls))",
      "coproc touch coproc",
      "function f { touch fn; }; f",
      "[[ -e notes.txt ]] && touch dbl",
      "cat <<< x > here.txt",
      "echo {a,b}.txt | xargs touch",
      "$'\\x74ouch' ansi",
      "echo x >& amp.txt",
    ).map((t) => plain(t, "dash-bash"))
    const assignment: Arb = fc.oneof(
      CROSS,
      fc.tuple(pick("LC_ALL=C ", "X=1 ", "TZ=UTC "), leaf).map(([a, c]) => wrapped(c, a, "assignment")),
      pick(
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch fsm' git status",
        "git -c core.fsmonitor='touch fsm' status",
        "git -c alias.x='!touch gal' x",
        "GIT_DIR=../outside/repo git init -q",
        "PATH=./bin:/usr/bin:/bin ls",
        "PATH=bin:$PATH ls",
        "LD_PRELOAD=/nonexistent.so ls",
        "IFS=/ ls",
      ).map((t) => plain(t, "assignment")),
    )
    const wrapperIn: Arb = fc
      .tuple(
        pick(
          "command ",
          "env ",
          "nice -n 1 ",
          "nohup ",
          "timeout 5 ",
          "stdbuf -oL ",
          "setsid ",
          "time ",
          "ionice -c 3 ",
          "exec ",
          "env -i PATH=/usr/bin:/bin ",
        ),
        leaf,
      )
      .map(([w, c]) => wrapped(c, w, "wrapper-in-table"))
    const wrapperOut: Arb = fc.oneof(
      CROSS,
      fc
        .tuple(
          pick(
            "flock . ",
            "taskset 0x1 ",
            "chrt -o 0 ",
            "unshare ",
            "setpriv ",
            "setarch x86_64 ",
            "prlimit --nofile=64 ",
            "strace -o /dev/null ",
            "runuser -u root -- ",
            "systemd-run ",
            "chroot / ",
            "nsenter ",
            "busybox ",
          ),
          leaf,
        )
        .map(([w, c]) => wrapped(c, w, "wrapper-outside-table")),
      fc
        .tuple(pick("script -qc ", "su -c ", "parallel ::: "), leaf)
        .map(([w, c]) =>
          w === "parallel ::: "
            ? tag(join(`parallel ${quote(c.text)} ::: 1`, c), "wrapper-outside-table")
            : tag(join(`${w}${quote(c.text)}${w === "script -qc " ? " /dev/null" : ""}`, c), "wrapper-outside-table"),
        ),
    )
    const unknownArgs: Arb = pick(
      "find . -name notes.txt -exec rm {} +",
      "find sub -type f -exec touch {}.bak \\;",
      "find . -maxdepth 1 -name '*.txt' -delete",
      "xargs rm -f < list.txt",
      "xargs touch < list.txt",
      "cat list.txt | xargs -I{} cp {} ../outside/",
      "find .. -name o.txt -exec rm {} \\;",
      "find . -name README.md -execdir cp {} ../outside/ \\;",
    ).map((t) => plain(t, "find-exec-xargs"))
    const nested: Arb = fc.oneof(
      CROSS,
      fc
        .tuple(leaf, fc.integer({ min: 2, max: 40 }))
        .map(([c, n]) => tag(join(`${"( ".repeat(n)}${c.text}${" )".repeat(n)}`, c), "deep-nesting")),
      fc.tuple(leaf, fc.integer({ min: 2, max: 12 })).map(([c, n]) => {
        let text = c.text
        for (let i = 0; i < n; i++) text = `sh -c ${quote(text)}`
        return tag(join(text, c), "deep-nesting")
      }),
      fc
        .tuple(leaf, fc.integer({ min: 2, max: 20 }))
        .map(([c, n]) => tag(join(`echo ${"$(echo ".repeat(n)}x${")".repeat(n)}; ${c.text}`, c), "deep-nesting")),
      fc
        .tuple(leaf, fc.constantFrom(1500, 3000))
        .map(([c, n]) => tag(join(`${"{ ".repeat(n)}${c.text}${"; }".repeat(n)}`, c), "deep-nesting")),
    )
    const structured: Arb = fc.oneof(
      CROSS,
      command.map((c) => join(`( ${c.text} )`, c)),
      command.map((c) => join(`{ ${c.text}; }`, c)),
      command.map((c) => join(`if true; then ${c.text}; fi`, c)),
      command.map((c) => join(`for i in 1; do ${c.text}; done`, c)),
      command.map((c) => join(`echo "$(${c.text})"`, c)),
      command.map((c) => join(`echo \`${c.text.replaceAll("\\", "\\\\").replaceAll("`", "\\`")}\``, c)),
      lists(command),
    )
    return {
      leaf: fc.oneof(CROSS, { arbitrary: simple, weight: 4 }, { arbitrary: redirect, weight: 1 }),
      command: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        { arbitrary: simple, weight: 6 },
        { arbitrary: lists(simple), weight: 3 },
        { arbitrary: redirect, weight: 2 },
        { arbitrary: devFd, weight: 1 },
        { arbitrary: continued, weight: 1 },
        { arbitrary: heredoc, weight: 1 },
        { arbitrary: compoundRedirect, weight: 1 },
        { arbitrary: functionRedirect, weight: 1 },
        { arbitrary: link, weight: 1 },
        { arbitrary: cd, weight: 2 },
        { arbitrary: shellOptions, weight: 1 },
        { arbitrary: envSplit, weight: 1 },
        { arbitrary: textRun, weight: 2 },
        { arbitrary: divergent, weight: 1 },
        { arbitrary: assignment, weight: 1 },
        { arbitrary: wrapperIn, weight: 1 },
        { arbitrary: wrapperOut, weight: 2 },
        { arbitrary: unknownArgs, weight: 1 },
        { arbitrary: nested, weight: 1 },
        { arbitrary: structured, weight: 2 },
      ),
    }
  }).command
}
