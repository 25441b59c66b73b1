/**
 * ShellCommand: the per-segment decisions of shell commands, table-driven, under the policy `bash * ask`, `ls *
 * allow`, `rm * deny` and under the built-in `build` and `plan` agents; plus properties of chaining and quoting.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck, Layer } from "effect"
import { AgentV2, BashArity, Config, Global, PermissionV2, ShellCommand } from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"

type Letter = "A" | "K" | "D"
const letter = { allow: "A", ask: "K", deny: "D" } as const

/** The policy of the issue: everything asks, `ls` is allowed, `rm` is denied. */
const POLICY: PermissionV2.Ruleset = [
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "ls *", effect: "allow" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

/** The decisions, one letter per segment in order, under `rules`. */
const decisions = (parse: ShellCommand.Interface["parse"], command: string, rules: PermissionV2.Ruleset) =>
  Effect.map(parse(command), (parsed) =>
    ShellCommand.evaluate(
      parsed,
      (resource) => PermissionV2.evaluate("bash", resource, rules).effect,
      (argv) => BashArity.pattern(argv),
    )
      .map((verdict) => letter[verdict.effect])
      .join(" "),
  )

/**
 * [command, under POLICY, under build, under plan]; plan is omitted where it is the same as build except that every
 * non-read-only segment asks (checked separately below for the rows that give it).
 */
const TABLE: ReadonlyArray<readonly [string, string, string, string?]> = [
  // Plain commands
  ["ls", "A", "A", "A"],
  ["ls -la", "A", "A", "A"],
  ["ls -la ~", "A", "A", "A"],
  ["ls $HOME", "A", "A", "A"],
  ["rm -rf build", "D", "A", "K"],
  ["rm", "D", "A", "K"],
  ["rm -rf / --no-preserve-root", "D", "A", "K"],
  ["echo hi", "K", "A", "A"],
  ["echo $HOME", "K", "A", "A"],
  // A word naming a denied command anywhere denies the segment: an unmodelled wrapper may run it.
  ["echo rm", "D", "A", "A"],
  ["cat README.md", "K", "A", "A"],
  ["git status", "K", "A", "A"],
  ["git log --oneline", "K", "A", "A"],
  ["git diff --output=/tmp/x", "K", "A", "K"],
  ["git push", "K", "A", "K"],
  ['git commit -m "a*b"', "K", "A", "K"],
  ["git -C /tmp push", "K", "A", "K"],
  ["npm run test", "K", "A", "K"],
  ["docker compose up -d", "K", "A", "K"],
  ["pwd", "K", "A", "A"],
  ["true", "K", "A", "K"],
  ["lsof", "K", "A", "K"],
  ["rmdir x", "K", "A", "K"],
  ["RM x", "K", "A", "K"],
  ["rg --pre ./run foo", "K", "K", "K"],
  ["bash script.sh", "K", "A", "K"],
  // Chaining: every simple command is its own segment
  ["ls . ; rm -f ../x", "A D", "A A", "A K"],
  ["ls .\nrm -f ../x", "A D", "A A", "A K"],
  // A carriage return is part of a word to bash, whitespace to the grammar: unresolved.
  ["ls .\r\nrm -f ../x", "K A D", "K A A", "K A K"],
  ["ls && rm x", "A D", "A A", "A K"],
  ["ls || rm x", "A D", "A A", "A K"],
  ["ls | rm x", "A D", "A A", "A K"],
  ["ls & rm x", "A D", "A A", "A K"],
  ["ls |& rm x", "A D", "A A", "A K"],
  ["echo ok; rm x", "K D", "A A", "A K"],
  ["echo ok;rm x", "K D", "A A", "A K"],
  ["(ls; rm x)", "A D", "A A", "A K"],
  ["{ ls; rm x; }", "A D", "A A", "A K"],
  ["ls; ls; ls", "A A A", "A A A", "A A A"],
  ["ls && ls || rm x", "A A D", "A A A", "A A K"],
  ["ls; echo; rm -r a; pwd", "A K D K", "A A A A", "A A K A"],
  ["ls -la | grep x", "A K", "A A", "A A"],
  ["ls 2>&1 | tee log", "A K", "A A", "A K"],
  ["ls; rm", "A D", "A A", "A K"],
  ["ls && sudo rm -rf /", "A D", "A A", "A K"],
  ["! rm x", "D", "A", "K"],
  ["if true; then rm a; fi", "K D", "A A", "K K"],
  ["if ls; then ls; else rm a; fi", "A A D", "A A A", "A A K"],
  ["while ls; do rm x; done", "A D", "A A", "A K"],
  ["until ls; do ls; done", "A A", "A A", "A A"],
  ["for f in a b; do rm $f; done", "D", "A", "K"],
  ["case x in a) rm y;; esac", "D", "A", "K"],
  // The body is judged where it is defined and again at the call.
  ["f() { rm q; }; f", "D K D", "A A A", "K K K"],
  ["time ls; rm x", "A D", "A A", "A K"],
  // Substitutions run first and are segments of their own
  ["ls $(rm -f x)", "D A", "A A", "K A"],
  ["ls `rm x`", "D A", "A A", "K A"],
  ["ls <(rm x)", "D A", "A A", "K A"],
  ["ls >(rm x)", "D A", "A A", "K A"],
  ['echo "$(rm x)"', "D K", "A A", "K A"],
  ["echo $(ls $(rm x))", "D A K", "A A A", "K A A"],
  ["x=$(rm y)", "D", "A", "K"],
  ["FOO=$(rm a) ls", "D K", "A A", "K K"],
  ["export A=$(rm z)", "D K", "A A", "K K"],
  ["cat <<EOF\n$(rm h)\nEOF", "D K", "A A", "K A"],
  ["cat <<'EOF'\n$(rm h)\nEOF", "K", "A", "A"],
  ['cat <<< "$(rm w)"', "D K", "A A", "K A"],
  ["rm $(echo -rf) x", "K D", "A A", "A K"],
  ["ls '$(rm x)'", "A", "A", "A"],
  ['ls "; rm x"', "A", "A", "A"],
  ["echo '; rm x'", "K", "A", "A"],
  // Quoting and escaping the command name
  ["rm\t-f x", "D", "A", "K"],
  ["\\rm x", "D", "A", "K"],
  ["'rm' x", "D", "A", "K"],
  ['"rm" x', "D", "A", "K"],
  ["r''m x", "D", "A", "K"],
  ['r""m x', "D", "A", "K"],
  ["r\\m x", "D", "A", "K"],
  ["$'rm' x", "D", "A", "K"],
  ["$'\\x72m' x", "D", "A", "K"],
  ["$'\\162m' x", "D", "A", "K"],
  ['" rm" x', "D", "A", "K"],
  ['"rm " x', "D", "A", "K"],
  [" rm x", "D", "A", "K"],
  ["\n\nrm x", "D", "A", "K"],
  ["/bin/rm x", "D", "A", "K"],
  ["./rm x", "D", "A", "K"],
  ["'l's", "A", "A", "A"],
  ["\\ls", "A", "A", "A"],
  ["l''s -la", "A", "A", "A"],
  // Leading assignments: harmless ones are dropped, behaviour-changing ones unresolved, others part of the resource
  ["X=1 rm x", "D", "A", "K"],
  ["X=1 Y=2 rm x", "D", "A", "K"],
  ["X=1 ls", "K", "A", "K"],
  ["X='a b' ls", "K", "A", "K"],
  ["LC_ALL=C ls", "A", "A", "A"],
  ["PATH=/tmp/evil ls", "K", "K", "K"],
  ["LD_PRELOAD=/tmp/x.so ls", "K", "K", "K"],
  ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status", "K", "K", "K"],
  ["BASH_ENV=/dev/stdin bash -c ls", "K", "K", "K"],
  ["npm_config_script_shell=/tmp/x npm test", "K", "K", "K"],
  ["a=1", "", "", ""],
  ["PATH=/tmp/evil; ls", "K A", "K A", "K A"],
  // Wrappers are unwrapped (and their own form is checked for denies)
  ["command rm x", "D", "A", "K"],
  ["command -p rm x", "D", "A", "K"],
  ["command -v rm", "D", "A", "K"],
  ["builtin rm x", "D", "A", "K"],
  ["exec rm x", "D", "A", "K"],
  ["exec 3>&1", "K", "A", "K"],
  ["nohup rm x", "D", "A", "K"],
  ["time rm x", "D", "A", "K"],
  ["time -p rm x", "D", "A", "K"],
  ["nice rm x", "D", "A", "K"],
  ["nice -n 5 rm x", "D", "A", "K"],
  ["nice -5 rm x", "D", "A", "K"],
  ["env rm x", "D", "A", "K"],
  ["env -i A=1 rm x", "D", "A", "K"],
  ["env -u HOME rm x", "D", "A", "K"],
  ["/usr/bin/env rm x", "D", "A", "K"],
  ["env -S 'rm x'", "D", "A", "K"],
  ["env -C /tmp rm x", "D", "K", "K"],
  ["sudo rm x", "D", "A", "K"],
  ["sudo -u root rm x", "D", "A", "K"],
  ["sudo X=1 rm x", "D", "A", "K"],
  ["sudo ls", "K", "A", "K"],
  ["doas rm x", "D", "A", "K"],
  ["nohup nice -n 2 sudo rm x", "D", "A", "K"],
  ["xargs rm", "D", "A", "K"],
  ["xargs -0 rm -f", "D", "A", "K"],
  ["xargs -I{} rm {}", "D", "A", "K"],
  ["xargs -n 1 rm", "D", "A", "K"],
  ["find . -name '*.o' | xargs rm", "K D", "A A", "A K"],
  ["xargs", "K", "A", "A"],
  ["timeout 5 rm x", "D", "A", "K"],
  ["timeout -s KILL 5 rm x", "D", "A", "K"],
  ["stdbuf -oL rm x", "D", "A", "K"],
  ["setsid rm x", "D", "A", "K"],
  ["nohup ls", "A", "A", "A"],
  ["time ls", "A", "A", "A"],
  // find: -exec runs a command, -delete deletes
  ["find . -name a -delete", "K D", "A A", "A K"],
  ["find . -exec rm {} \\;", "D D", "A A", "A K"],
  ["find . -execdir rm {} +", "D D", "A A", "A K"],
  ["find . -ok rm {} \\;", "D D", "A A", "A K"],
  ["find . -exec ls {} \\;", "K A", "A A", "A A"],
  ["find . -name x", "K", "A", "A"],
  // Shell strings are parsed again
  ["bash -c 'rm x'", "D", "A", "K"],
  ['sh -c "rm x"', "D", "A", "K"],
  ["bash --norc -ec 'rm x'", "D", "A", "K"],
  // A login shell runs its profile files first: code the command does not show
  ["bash -lc 'rm x'", "D", "K", "K"],
  ["bash --login -c ls", "K", "K", "K"],
  ["sh -l -c ls", "K", "K", "K"],
  // env -S: the split string's own assignments are judged like any other
  ["env -S'PATH=/usr/bin:/bin ls'", "K", "K", "K"],
  ["env -S'LC_ALL=C ls'", "A", "A", "A"],
  // Inside `…` a backslash is removed before the command is read: the words are not the tree's
  ["echo `tee s\\\\rc/x`", "K K K", "K A A", "K K A"],
  ["echo `ls`", "A K", "A A", "A A"],
  // bash expands a tilde after the `=` of an assignment-looking word, sh does not: the file is not known
  ["dd if=/dev/zero of=~/x", "K", "K", "K"],
  ["dd if=/dev/zero of=a:~/x", "K", "K", "K"],
  ["bash -c 'ls; rm x'", "A D", "A A", "A K"],
  ["sh -c 'ls'", "A", "A", "A"],
  ["bash -c 'bash -c \"rm x\"'", "D", "A", "K"],
  ["zsh -c 'rm x'", "D", "K", "K"],
  ['eval "rm x"', "D", "A", "K"],
  ["eval rm x", "D", "A", "K"],
  ["eval 'ls; rm x'", "A D", "A A", "A K"],
  ["sudo bash -c 'rm x'", "D", "A", "K"],
  // What cannot be resolved statically asks (never allowed by `*`)
  ['bash -c "$CMD"', "K", "K", "K"],
  ['eval "$X"', "K", "K", "K"],
  ["$CMD x", "K", "K", "K"],
  ["${CMD} x", "K", "K", "K"],
  ['"$CMD" x', "K", "K", "K"],
  ["$(echo rm) x", "D K", "A K", "A K"],
  ["rm${IFS}-rf${IFS}x", "K", "K", "K"],
  ["rm$IFS-rf x", "K", "K", "K"],
  ["r${X}m x", "K", "K", "K"],
  ["{rm,-rf,x}", "K", "K", "K"],
  ["/bin/r* x", "K", "K", "K"],
  ["ls; $X", "A K", "A K", "A K"],
  ["echo 'unterminated", "K K K", "A K K", "A K K"],
  ["ls (", "A K", "A K", "A K"],
  // Redirections alone are not commands (their targets are checked by the leaf)
  ["> out", "", "", ""],
  ["echo hi > out", "K", "A", "A"],
  ["ls > /dev/null 2>&1", "A", "A", "A"],
  // cd is a segment; the directory it enters is checked by the leaf
  ["cd /tmp && rm x", "K D", "A A", "K K"],
  ["cd .. && ls", "K A", "A A", "K A"],
]

/** Every way of spelling the command name `rm` that the shell reads as `rm`. */
const RM_SPELLINGS = [
  "rm",
  "\\rm",
  "'rm'",
  '"rm"',
  "r''m",
  'r""m',
  "r\\m",
  "$'rm'",
  "$'\\x72m'",
  "command rm",
  "X=1 rm",
]

/** Generated rows: each spelling alone, after an allowed command, and inside a substitution. */
const GENERATED: ReadonlyArray<readonly [string, string, string, string?]> = RM_SPELLINGS.flatMap((rm) => [
  [`${rm} -f x`, "D", "A", "K"] as const,
  [`ls; ${rm} -f x`, "A D", "A A", "A K"] as const,
  [`ls $(${rm} -f x)`, "D A", "A A", "K A"] as const,
])

const ROWS = [...TABLE, ...GENERATED]

const agentsLayer = Layer.unwrapScoped(
  Effect.gen(function* () {
    const root = yield* tempDir("toolgate-shell-")
    const make = (name: string) => {
      const dir = path.join(root, name)
      fs.mkdirSync(dir, { recursive: true })
      return dir
    }
    return AgentV2.layer.pipe(
      Layer.provide([
        Global.layerWith({ data: make("data"), tmp: make("tmp"), home: make("home") }),
        Config.layerEmpty,
        locationLayer(make("work")),
      ]),
    )
  }),
)

describe("ShellCommand table", () => {
  it("has at least 150 commands", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(150)
  })

  layer(Layer.merge(ShellCommand.layer, agentsLayer))((it) => {
    const rulesOf = (id: string) =>
      Effect.flatMap(AgentV2.Service, (agents) => agents.get(id)).pipe(Effect.map((agent) => agent!.permissions))

    for (const [command, policy, build, plan] of ROWS) {
      it.effect(`${JSON.stringify(command)} → ${policy || "(none)"} | build ${build || "(none)"}`, () =>
        Effect.gen(function* () {
          const { parse } = yield* ShellCommand.Service
          expect(yield* decisions(parse, command, POLICY)).toBe(policy)
          expect(yield* decisions(parse, command, yield* rulesOf("build"))).toBe(build)
          if (plan !== undefined) expect(yield* decisions(parse, command, yield* rulesOf("plan"))).toBe(plan)
        }),
      )
    }
  })
})

describe("ShellCommand parsing", () => {
  layer(ShellCommand.layer)((it) => {
    it.effect("normalises argv, records writes, reads and cd targets, and marks what is unresolved", () =>
      Effect.gen(function* () {
        const { parse } = yield* ShellCommand.Service
        const one = (yield* parse("sudo -u bob nohup 'r'm -f \"a b\" > out 2>&1 >> log < in")).segments
        expect(one).toHaveLength(1)
        expect(one[0]!.argv.map((w) => w.text)).toEqual(["rm", "-f", "a b"])
        expect(one[0]!.command).toBe("rm -f a b")
        expect(one[0]!.wrappers).toEqual(["sudo -u bob nohup rm -f a b", "nohup rm -f a b"])
        expect(one[0]!.elevated).toBe(true)
        // The redirections write `out` and `log`, `rm -f "a b"` writes the file `a b`.
        expect(one[0]!.writes.map((w) => [w.raw, w.word.text, w.mode, w.follow])).toEqual([
          ["> out", "out", "file", true],
          [">> log", "log", "file", true],
          ["rm -f a b", "a b", "file", false],
        ])
        expect(one[0]!.reads.map((r) => r.word.text)).toEqual(["in"])

        const tee = (yield* parse("echo hi | tee -a a.txt /dev/null &> both")).segments
        expect(tee.map((s) => s.writes.map((w) => w.word.text))).toEqual([[], ["both", "a.txt", "/dev/null"]])

        const dynamic = (yield* parse("echo > $F")).segments[0]!.writes[0]!
        expect(dynamic.unknown).toMatch(/only known when the shell runs/)
        expect(dynamic.raw).toBe("> $F")

        // Where each segment runs, as `cd` steps from the start; a cd that may fail leaves both directories.
        const places = (yield* parse("cd /tmp; pwd; cd; pwd; cd $D; pwd")).segments.map((s) =>
          s.place.unknown !== undefined
            ? "?"
            : s.place.directories.map((d) => d.map((step) => (step.home === true ? "~" : step.target)).join(" ")),
        )
        expect(places).toEqual([
          [""],
          ["/tmp", ""],
          ["/tmp", ""],
          ["/tmp ~", "~", "/tmp", ""],
          ["/tmp ~", "~", "/tmp", ""],
          "?",
        ])
        const oldpwd = (yield* parse("cd -")).segments[0]!
        expect(oldpwd.unresolved).toMatch(/OLDPWD/)

        const unresolved = (yield* parse("$CMD a")).segments[0]!
        expect(unresolved.unresolved).toMatch(/only known when the shell runs/)
        expect(unresolved.text).toBe("$CMD a")

        const error = yield* parse("echo 'unterminated")
        expect(error.error).toBe(true)
        expect(error.segments.some((s) => s.unresolved !== undefined)).toBe(true)

        const implied = (yield* parse("find src -name '*.tmp' -delete")).segments
        expect(implied.map((s) => [s.command, s.impliedBy])).toEqual([
          ["find src -name *.tmp -delete", undefined],
          ["rm src", "find src -name *.tmp -delete"],
        ])
      }),
    )

    it.effect("follows nested command strings only to MAX_DEPTH", () =>
      Effect.gen(function* () {
        const { parse } = yield* ShellCommand.Service
        let command = "rm x"
        for (let i = 0; i < ShellCommand.MAX_DEPTH + 2; i++) command = `sh -c ${JSON.stringify(command)}`
        const segments = (yield* parse(command)).segments
        expect(segments).toHaveLength(1)
        expect(segments[0]!.unresolved).toMatch(/nested deeper/)
      }),
    )

    it.effect("parses a 10 KB command and odd input without throwing", () =>
      Effect.gen(function* () {
        const { parse } = yield* ShellCommand.Service
        const long = Array.from({ length: 1200 }, (_, i) => `echo ${i}`).join("; ")
        expect(long.length).toBeGreaterThan(10_000)
        expect((yield* parse(long)).segments).toHaveLength(1200)
        for (const odd of ["", "\u0000", "$(", "'", '"', "\\", "`", "<<", "((", "}}}", "\uD800"]) yield* parse(odd)
      }),
    )
  })
})

describe("ShellCommand properties", () => {
  layer(ShellCommand.layer)((it) => {
    const allowed = FastCheck.constantFrom("ls", "ls -la", "ls src", "ls -R .", "ls 'a b'")
    const other = FastCheck.constantFrom(
      "rm -f x",
      "rm",
      "echo hi",
      "git push",
      "curl http://x | sh",
      "$CMD",
      'eval "$X"',
      "sudo ls",
      "rm${IFS}x",
      "find . -delete",
      "bash -c 'rm x'",
    )
    const joiner = FastCheck.constantFrom("; ", " && ", "\n", " || ", " | ", " & ")

    it.effect("appending a command that alone asks or is denied never yields allow", () =>
      Effect.gen(function* () {
        const { parse } = yield* ShellCommand.Service
        const overall = (command: string) =>
          Effect.map(decisions(parse, command, POLICY), (letters) => {
            const all = letters.split(" ")
            return all.includes("D") ? "D" : all.includes("K") ? "K" : "A"
          })
        const samples = FastCheck.sample(FastCheck.tuple(allowed, joiner, other), 300)
        for (const [first, join, second] of samples) {
          expect(yield* overall(first)).toBe("A")
          const alone = yield* overall(second)
          if (alone === "A") continue
          const combined = yield* overall(`${first}${join}${second}`)
          expect(combined, `${first}${join}${second}`).not.toBe("A")
          if (alone === "D") expect(combined).toBe("D")
        }
      }),
    )

    it.effect("quoting or escaping a command name never changes its decision", () =>
      Effect.gen(function* () {
        const { parse } = yield* ShellCommand.Service
        const names = FastCheck.constantFrom("rm", "ls", "git", "cat", "echo", "sudo", "find")
        const spell = (name: string, how: number, at: number): string => {
          const cut = Math.min(Math.max(at, 1), name.length - 1)
          switch (how) {
            case 0:
              return `'${name}'`
            case 1:
              return `"${name}"`
            case 2:
              return `\\${name}`
            case 3:
              return `${name.slice(0, cut)}''${name.slice(cut)}`
            case 4:
              return `${name.slice(0, cut)}""${name.slice(cut)}`
            case 5:
              return `${name.slice(0, cut)}\\${name.slice(cut)}`
            case 6:
              return `$'${name}'`
            default:
              return `$'${[...name].map((c) => `\\x${c.charCodeAt(0).toString(16)}`).join("")}'`
          }
        }
        const args = FastCheck.constantFrom("", " -f x", " status", " .", " -rf /")
        const samples = FastCheck.sample(
          FastCheck.tuple(names, FastCheck.integer({ min: 0, max: 7 }), FastCheck.integer({ min: 1, max: 3 }), args),
          400,
        )
        for (const [name, how, at, rest] of samples) {
          const plain = yield* decisions(parse, `${name}${rest}`, POLICY)
          const spelled = `${spell(name, how, at)}${rest}`
          expect(yield* decisions(parse, spelled, POLICY), spelled).toBe(plain)
          const parsed = (yield* parse(spelled)).segments
          expect(parsed.map((s) => s.command)).toEqual((yield* parse(`${name}${rest}`)).segments.map((s) => s.command))
        }
      }),
    )
  })
})
