/**
 * The shell oracle's harness on fixed commands (the generated run is `shell-oracle.stress.test.ts`): what the
 * sandbox reports really happened (programs, files created, changed and removed, writes outside the temporary root
 * and writes the read-only host refused), that nothing real is touched, that every command starts from the template
 * and a timed-out one leaves nothing behind; the meta-test — the comparison fails for a gate that omits a write, a
 * protected path, an outside directory or a program, and passes for one that lists them exactly; the adapter on the
 * real bash tool; and the strace reader and the pictures on their own.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as Compare from "./support/shell-oracle/compare.js"
import * as Gate from "./support/shell-oracle/gate.js"
import * as Oracle from "./support/shell-oracle/oracle.js"
import * as Sandbox from "./support/shell-oracle/sandbox.js"
import * as Snapshot from "./support/shell-oracle/snapshot.js"
import * as Trace from "./support/shell-oracle/trace.js"

const unavailable = process.platform === "linux" ? Sandbox.unavailable() : "the oracle needs Linux"
if (unavailable !== undefined) console.warn(`shell-oracle: skipped: ${unavailable}`)

class Current extends Context.Tag("test/ShellOracle")<Current, Oracle.Oracle>() {}

const oracleLayer = Layer.scoped(Current, Effect.orDie(Oracle.make(2)))

const SHELL = "/bin/sh"

/** Commands of `shell-oracle.stress.test.ts` that once did more than the gate listed, by the class of hole. */
const HOLES: ReadonlyArray<readonly [hole: string, command: string]> = [
  ["a login shell runs its profile files", "bash --login -c 'ls'"],
  ["a login shell runs its profile files", "sh -lc 'ls'"],
  ["assignments inside env -S", "ls; env -S'PATH=/usr/bin:/bin mkdir -p newdir'"],
  ["assignments inside env -S", "env -S'LC_ALL=C sed -i s/a/b/ notes.txt'"],
  ["a tilde after = in an argument", "dd if=/dev/zero of=~/h2.txt bs=1 count=1 status=none"],
  ["a backslash inside `…`", "echo `echo x | tee s\\\\rc/gen.ts > new.txt`"],
]

/** Runs `command` in the sandbox with `/bin/sh -c`, whatever a gate thinks of it. */
const reality = (command: string, timeoutMs = Oracle.COMMAND_TIMEOUT_MS) =>
  Effect.gen(function* () {
    const oracle = yield* Current
    const reply = yield* Effect.orDie(
      oracle.pool.run({
        argv: [SHELL, "-c", command],
        cwd: oracle.space.project,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs,
      }),
    )
    const trace = Trace.read(reply.trace, oracle.space.project)
    const changed = reply.changes.map((c) => `${c.kind} ${c.type} ${c.path}`)
    return { reply, trace, changed, executed: trace.execs.map((e) => e.program) }
  })

/** A gate that sees exactly `programs` and `writes` (relative to the project; a directory for external ones). */
const exact = (
  oracle: Oracle.Oracle,
  programs: ReadonlyArray<string>,
  writes: ReadonlyArray<readonly [action: string, target: string]>,
): Gate.Gate => ({
  view: (command) =>
    Effect.succeed({
      outcome: "ran",
      text: "",
      unresolved: [],
      programs,
      unknownWrites: [],
      writes: writes.map(([action, target]) => ({
        action,
        resource: target,
        absolute: path.resolve(oracle.space.project, target),
      })),
      asks: [],
      spawned: { command, shell: SHELL, cwd: oracle.space.project },
    }),
  knows: (_command, program) => Effect.succeed(programs.includes(program)),
})

/** Judges `command` against `gate`. */
const judge = (command: string, gate: Gate.Gate) =>
  Effect.flatMap(Current, (oracle) => Oracle.check(oracle, { text: command, classes: ["fixed"] }, gate))

/** Judges `command` against `gate` and expects a pass, showing the report otherwise. */
const passes = (command: string, gate: Gate.Gate) =>
  Effect.map(judge(command, gate), (result) =>
    expect(result.verdict.status, Oracle.report(result, "fixed")).toBe("pass"),
  )

describe.skipIf(unavailable !== undefined)("shell oracle in bubblewrap", () => {
  layer(oracleLayer, { timeout: 120_000 })((it) => {
    describe("what really happened", () => {
      it.effect("a redirection creates the file it names; builtins start no program", () =>
        Effect.gen(function* () {
          const seen = yield* reality("echo x > new.txt")
          expect(seen.changed).toEqual(["created file project/new.txt"])
          expect(seen.executed).toEqual([])
        }),
      )

      it.effect("the programs of a pipeline are its executables, each found by its base name", () =>
        Effect.gen(function* () {
          const seen = yield* reality("cd sub; echo a | wc -l; /bin/ls deep; exec true")
          expect([...seen.executed].sort()).toEqual(["ls", "true", "wc"])
          expect(seen.changed).toEqual([])
        }),
      )

      it.effect("a link made by the command is followed by the write through it", () =>
        Effect.gen(function* () {
          const seen = yield* reality("ln -s ../outside l && echo x > l/f")
          expect(seen.changed).toEqual(["created file outside/f", "created symlink project/l"])
          expect(seen.executed).toEqual(["ln"])
        }),
      )

      it.effect("rm -rf outside, /tmp and the host root touch nothing real, and every change is reported", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const host = `/tmp/toolgate-oracle-probe-${process.pid}`
          const seen = yield* reality(
            `rm -rf ../outside ../home; echo gone > ${host}; echo y > /etc/toolgate-oracle-probe; cd /tmp && mkdir -p made/deeper`,
          )
          expect(fs.existsSync(path.join(oracle.space.outside, "o.txt"))).toBe(true)
          expect(fs.existsSync(path.join(oracle.space.home, "h.txt"))).toBe(true)
          expect(fs.existsSync(host)).toBe(false)
          expect(fs.existsSync("/etc/toolgate-oracle-probe")).toBe(false)
          expect(seen.changed).toEqual([
            "removed directory home",
            "removed file home/h.txt",
            "removed directory outside",
            "removed directory outside/dir",
            "removed file outside/dir/inner.txt",
            "removed file outside/o.txt",
          ])
          const all = Compare.changes(oracle.space, seen.reply, seen.trace)
          expect(all.get(host)?.kind).toBe("openat")
          expect(all.get("/etc/toolgate-oracle-probe")?.kind).toBe("openat (refused by the sandbox)")
          expect(all.has("/tmp/made")).toBe(true)
          expect(all.has("/tmp/made/deeper")).toBe(true)
        }),
      )

      it.effect("/dev/fd/../cwd is the working directory, and a chmod or touch of an existing file is a change", () =>
        Effect.gen(function* () {
          const seen = yield* reality(
            "echo x > /dev/fd/../cwd/via-fd.txt; chmod 600 notes.txt; touch -d 2002-02-02 README.md",
          )
          expect(seen.changed).toEqual([
            "changed file project/README.md",
            "changed file project/notes.txt",
            "created file project/via-fd.txt",
          ])
        }),
      )

      it.effect("every command starts from the template, /tmp emptied", () =>
        Effect.gen(function* () {
          for (let i = 0; i < 2; i++) {
            const seen = yield* reality("rm -rf notes.txt sub .git/config; chmod 000 src; ls /tmp; mkdir /tmp/left")
            expect(seen.changed).toEqual([
              "removed file project/.git/config",
              "removed file project/notes.txt",
              "changed directory project/src",
              "removed directory project/sub",
              "removed file project/sub/a.txt",
              "removed directory project/sub/deep",
              "removed file project/sub/deep/b.txt",
            ])
            expect(seen.reply.output).not.toContain("left")
          }
        }),
      )

      it.effect("a command past its timeout is killed with everything it started", () =>
        Effect.gen(function* () {
          const slow = yield* reality("sleep 30 & sleep 30 & touch started; wait", 1000)
          expect(slow.reply.timedOut).toBe(true)
          const [next, other] = yield* Effect.all([reality("ps -e -o comm="), reality("touch other.txt")], {
            concurrency: 2,
          })
          expect(next.reply.output).not.toContain("sleep")
          expect(other.changed).toEqual(["created file project/other.txt"])
        }),
      )
    })

    describe("the comparison fails for a gate that omits", () => {
      it.effect("a write in the project", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const command = "echo x > new.txt; mkdir -p made/a/b; rm -rf sub"
          const right = exact(
            oracle,
            ["mkdir", "rm"],
            [
              ["edit", "new.txt"],
              ["edit", "made/a/b"],
              ["edit", "sub"],
            ],
          )
          yield* passes(command, right)
          const wrong = exact(
            oracle,
            ["mkdir", "rm"],
            [
              ["edit", "new.txt"],
              ["edit", "made/a/b"],
            ],
          )
          const result = yield* judge(command, wrong)
          expect(result.verdict.status).toBe("fail")
          expect(result.verdict.uncovered.map((u) => [path.relative(oracle.space.project, u.path), u.needs])).toEqual([
            ["sub", "edit"],
            ["sub/a.txt", "edit"],
            ["sub/deep", "edit"],
            ["sub/deep/b.txt", "edit"],
          ])
        }),
      )

      it.effect("a write outside the project, in /tmp or on the read-only host", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const command = "echo x > ../outside/new.txt; echo y > /tmp/t/u; echo z > /etc/toolgate-oracle-probe"
          const right = exact(
            oracle,
            [],
            [
              ["external_directory", "../outside"],
              ["external_directory", "/tmp/t"],
              ["external_directory", "/etc"],
            ],
          )
          yield* passes(command, right)
          const wrong = exact(
            oracle,
            [],
            [
              ["edit", "../outside/new.txt"],
              ["external_directory", "/tmp/t"],
            ],
          )
          const result = yield* judge(command, wrong)
          expect(result.verdict.uncovered).toEqual([
            { path: path.join(oracle.space.outside, "new.txt"), kind: "created file", needs: "external_directory" },
            {
              path: "/etc/toolgate-oracle-probe",
              kind: "openat (refused by the sandbox)",
              needs: "external_directory",
            },
          ])
        }),
      )

      it.effect("the protected_path ask of a protected write (an edit is not enough)", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const command = "echo x >> .git/config; touch .toolgate/agents/new.md"
          const right = exact(
            oracle,
            ["touch"],
            [
              ["protected_path", ".git/config"],
              ["protected_path", ".toolgate/agents/new.md"],
            ],
          )
          yield* passes(command, right)
          const wrong = exact(
            oracle,
            ["touch"],
            [
              ["edit", ".git/config"],
              ["protected_path", ".toolgate/agents/new.md"],
            ],
          )
          const result = yield* judge(command, wrong)
          expect(result.verdict.uncovered).toEqual([
            { path: path.join(oracle.space.project, ".git/config"), kind: "changed file", needs: "protected_path" },
          ])
        }),
      )

      it.effect("a program, a wrapper, or what a nested shell runs", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const command = "ls sub | wc -l; nohup sh -c 'cat notes.txt' > /dev/null"
          yield* passes(command, exact(oracle, ["ls", "wc", "nohup", "sh", "cat"], []))
          const result = yield* judge(command, exact(oracle, ["ls", "sh"], []))
          expect(result.verdict.status).toBe("fail")
          expect(result.verdict.missingPrograms).toEqual(["wc", "nohup", "cat"])
        }),
      )

      it.effect(
        "nothing when the gate refused or left the command unresolved; no write when it asked about unknown files",
        () =>
          Effect.gen(function* () {
            const oracle = yield* Current
            const blind = exact(oracle, [], [])
            const refused: Gate.Gate = {
              ...blind,
              view: (c) => Effect.map(blind.view(c), (v) => ({ ...v, outcome: "refused" as const })),
            }
            const unresolved: Gate.Gate = {
              ...blind,
              view: (c) => Effect.map(blind.view(c), (v) => ({ ...v, unresolved: [`unresolved:${c}`] })),
            }
            expect((yield* judge("touch x", refused)).verdict.status).toBe("refused")
            expect((yield* judge("touch x", unresolved)).verdict.status).toBe("unresolved")
            expect((yield* judge("touch x", blind)).verdict.status).toBe("fail")
            const unknown = (programs: ReadonlyArray<string>): Gate.Gate => {
              const base = exact(oracle, programs, [])
              return {
                ...base,
                view: (c) => Effect.map(base.view(c), (v) => ({ ...v, unknownWrites: [`edit unresolved:${c}`] })),
              }
            }
            yield* passes("xargs touch < list.txt", unknown(["xargs", "touch"]))
            expect((yield* judge("xargs touch < list.txt", unknown(["xargs"]))).verdict.missingPrograms).toEqual([
              "touch",
            ])
          }),
      )
    })

    describe("the adapter reads the real bash tool", () => {
      it.effect("programs from the bash asks, the shell it would spawn, and a probe for an unwrapped wrapper", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const view = yield* oracle.gate.view("ls sub | wc -l")
          expect(view.outcome).toBe("ran")
          expect(view.unresolved).toEqual([])
          expect([...view.programs].sort()).toEqual(["ls", "wc"])
          expect(view.spawned?.cwd).toBe(oracle.space.project)
          expect(yield* oracle.gate.knows("nohup ls sub", "nohup")).toBe(true)
          expect(yield* oracle.gate.knows("ls sub", "rm")).toBe(false)
        }),
      )

      it.effect("a redirection is a write resource resolved to its absolute path, or the command is unresolved", () =>
        Effect.gen(function* () {
          const oracle = yield* Current
          const view = yield* oracle.gate.view("echo x > ../outside/new.txt")
          const covered = view.writes.some(
            (w) => w.action === "external_directory" && w.absolute === oracle.space.outside,
          )
          expect(covered || view.unresolved.length > 0).toBe(true)
        }),
      )
    })

    describe("holes the generated run found stay closed (the real bash tool against the real shell)", () => {
      for (const [hole, command] of HOLES) {
        it.effect(`${hole}: ${command}`, () =>
          Effect.gen(function* () {
            const oracle = yield* Current
            const result = yield* Oracle.check(oracle, { text: command, classes: ["regression"] })
            expect(result.verdict.status, Oracle.report(result, "regression")).not.toBe("fail")
          }),
        )
      }
    })
  })
})

describe("shell oracle: the gate's programs", () => {
  it("are the base names of the command words, past kept assignments", () => {
    expect(
      ["ls -la", "/usr/bin/git status", "PATH=/usr/bin:/bin X=1 ln a b", "X=1", " nohup  ls"].map(Gate.programOf),
    ).toEqual(["ls", "git", "ln", undefined, "nohup"])
  })
})

describe("shell oracle: reading an strace log", () => {
  it("joins unfinished calls, follows chdir and clone, and keeps what the sandbox refused", () => {
    const log = [
      `10    execve("/bin/sh", ["/bin/sh", "-c", "x"], 0x7ffe /* 7 vars */) = 0`,
      `10    chdir("/work/sub")                = 0`,
      `10    clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>`,
      `11    execve("/usr/bin/mkdir", ["mkdir", "-p", "a/b"], 0x5601 /* 8 vars */ <unfinished ...>`,
      `10    <... clone resumed>)              = 11`,
      `11    <... execve resumed>)             = 0`,
      `11    mkdir("a", 0777)                  = 0`,
      `11    chdir("a")                        = 0`,
      `11    mkdir("b", 0777)                  = -1 EEXIST (File exists)`,
      `10    openat(AT_FDCWD</work/sub>, "/etc/x", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)`,
      `10    openat(AT_FDCWD</work/sub>, "/dev/fd/../cwd/y", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</work/sub/y>`,
      `10    openat(AT_FDCWD</work/sub>, "z", O_RDONLY) = 3</work/sub/z>`,
      `10    openat(AT_FDCWD</work/sub>, "missing/q", O_WRONLY|O_CREAT, 0666) = -1 ENOENT (No such file or directory)`,
      `10    renameat2(AT_FDCWD</work/sub>, "y", AT_FDCWD</tmp>, "moved \\"q\\"", RENAME_NOREPLACE) = 0`,
      `10    execve("/usr/bin/nope", ["nope"], 0x5601 /* 8 vars */) = -1 ENOENT (No such file or directory)`,
      `10    execve("/usr/bin/ls", ["ls"], 0x5601 /* 8 vars */) = 0`,
    ].join("\n")
    const trace = Trace.read(log, "/work")
    expect(trace.execs.map((e) => e.program)).toEqual(["mkdir", "ls"])
    expect(trace.writes.map((w) => [w.call, w.path, w.succeeded])).toEqual([
      ["mkdir", "/work/sub/a", true],
      ["openat", "/etc/x", false],
      ["openat", "/work/sub/y", true],
      ["renameat2", "/work/sub/y", true],
      ["renameat2", '/tmp/moved "q"', true],
    ])
  })

  it("resolves /proc/self/cwd and /dev/fd against the process's own directory", () => {
    const log = [
      `5    execve("/bin/sh", ["/bin/sh"], 0x1 /* 1 vars */) = 0`,
      `5    chdir("/work/deep")               = 0`,
      `5    mkdir("/proc/self/cwd/n", 0777)   = 0`,
      `5    unlink("/dev/fd/../cwd/../m")     = 0`,
    ].join("\n")
    expect(Trace.read(log, "/work").writes.map((w) => w.path)).toEqual(["/work/deep/n", "/work/m"])
  })
})

describe("shell oracle: pictures of the root", () => {
  it.effect("a difference names what was created, changed (content, mode, link target, time) and removed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync("/tmp/toolgate-oracle-picture-")),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
        )
        for (const name of ["a", "b", "c", "d"]) fs.writeFileSync(path.join(root, name), name)
        fs.mkdirSync(path.join(root, "dir"))
        fs.symlinkSync("a", path.join(root, "link"))
        const before = Snapshot.take(root)
        fs.writeFileSync(path.join(root, "a"), "changed")
        fs.chmodSync(path.join(root, "b"), 0o600)
        fs.utimesSync(path.join(root, "c"), new Date(0), new Date(0))
        fs.rmSync(path.join(root, "d"))
        fs.rmSync(path.join(root, "link"))
        fs.symlinkSync("b", path.join(root, "link"))
        fs.writeFileSync(path.join(root, "dir/new"), "")
        fs.chmodSync(path.join(root, "dir"), 0)
        const after = Snapshot.take(root)
        expect(Snapshot.diff(before, after).map((c) => `${c.kind} ${c.type} ${c.path}`)).toEqual([
          "changed file a",
          "changed file b",
          "changed file c",
          "removed file d",
          "changed directory dir",
          "created file dir/new",
          "changed symlink link",
        ])
        expect(fs.statSync(path.join(root, "dir")).mode & 0o777).toBe(0)
        expect(Snapshot.equal(after, Snapshot.take(root))).toBe(true)
      }),
    ),
  )
})
