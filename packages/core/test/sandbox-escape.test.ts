/**
 * Escapes from the bubblewrap sandbox, attempted with real processes as root and as `nobody` (a child process run
 * with `runuser`, through the real Sandbox layer): privilege (remount, umount, mount, chroot, unshare, setuid),
 * Unix sockets (a loopback socket server outside whose socket file is visible inside), secrets (credential stores,
 * system secrets, `.env` files, `deny_read`), protected paths (existing and missing) and the per-project tmp
 * directory. Every case checks the outcome on disk or on the server, not only the command's output.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AppProcess, Project } from "../src/index.js"
import { bwrapWorks, isRoot, NOBODY, nobodyWorks, sandboxed, scene, TIMEOUT } from "./support/sandbox-scene.js"

const works = (command: string, args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(command, args, { stdio: "ignore" }).status === 0
const hasPython = works("python3", ["--version"])
if (!bwrapWorks) console.warn("sandbox-escape: bubblewrap 0.8+ cannot create namespaces here; every case is skipped")
if (!nobodyWorks)
  console.warn("sandbox-escape: not root or runuser/bwrap unusable as nobody; the nobody cases are skipped")
if (!hasPython) console.warn("sandbox-escape: python3 is missing; the socket cases check node and curl only")

/** A Unix socket server at `socketPath` (any user may connect) that counts connections and answers "pong". */
const socketServer = (socketPath: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly connections: () => number }>((resume) => {
      let connections = 0
      const server = net.createServer((socket) => {
        connections += 1
        socket.end("pong\n")
      })
      server.listen(socketPath, () => {
        if (!socketPath.startsWith("\0")) fs.chmodSync(socketPath, 0o777)
        resume(Effect.succeed({ server, connections: () => connections }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void))),
  )

for (const user of ["root", "nobody"] as const) {
  describe.runIf(bwrapWorks && (user === "root" || nobodyWorks))(`the bubblewrap sandbox as ${user}`, () => {
    it.scoped(
      "holds no privilege: remount, umount of .git, a new mount, chroot, unshare and a setuid binary all fail, and nothing outside changes",
      () =>
        Effect.gen(function* () {
          const where = yield* scene(user)
          const { root } = where
          fs.mkdirSync(path.join(root, ".git"))
          fs.writeFileSync(path.join(root, ".git", "config"), "[core]\n")
          fs.mkdirSync(path.join(root, "m"))
          where.own()
          // A setuid-root copy of `id`: run as nobody outside the sandbox it reports euid 0.
          const suid = path.join(root, "suid-id")
          fs.copyFileSync("/usr/bin/id", suid)
          fs.chownSync(suid, 0, 0)
          fs.chmodSync(suid, 0o4755)
          const marker = `/etc/toolgate-escape-${process.pid}`
          const results = yield* sandboxed(user, where, { sandbox: { mode: "bubblewrap" } }, [
            "grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/self/status; id -u",
            `mount -o remount,bind,rw / 2>&1; echo rc=$?; echo pwned > ${marker}; echo w=$?`,
            `umount .git 2>&1; echo rc=$?; umount -l .git 2>&1; echo rc=$?; echo '[remote "x"]' >> .git/config; echo w=$?`,
            "mount -t tmpfs none m 2>&1; echo rc=$?; mount --bind / m 2>&1; echo rc=$?",
            "chroot / /bin/true 2>&1; echo rc=$?",
            "unshare -U -r true 2>&1; echo rc=$?; unshare -m true 2>&1; echo rc=$?; unshare -n true 2>&1; echo rc=$?",
            "./suid-id -u; ./suid-id -u -r",
          ])
          const [status, remount, umount, mount, chroot, unshare, setuid] = results.map((result) => result.output)
          expect(status).toMatch(/NoNewPrivs:\s+1/)
          expect(status).toMatch(/Seccomp:\s+2/)
          expect(status).toMatch(/CapEff:\s+0000000000000000/)
          expect(status).toMatch(/CapBnd:\s+0000000000000000/)
          expect(status).toMatch(new RegExp(`\\n${NOBODY}\\n$`))
          expect(remount).toMatch(/rc=[1-9]/)
          expect(remount).toMatch(/w=[1-9]/)
          expect(fs.existsSync(marker)).toBe(false)
          expect(umount).not.toMatch(/rc=0/)
          expect(umount).toMatch(/w=[1-9]/)
          expect(fs.readFileSync(path.join(root, ".git", "config"), "utf8")).toBe("[core]\n")
          expect(mount).not.toMatch(/rc=0/)
          expect(fs.readdirSync(path.join(root, "m"))).toEqual([])
          expect(chroot).not.toMatch(/rc=0/)
          expect(unshare).not.toMatch(/rc=0/)
          expect(setuid).toBe(`${NOBODY}\n${NOBODY}\n`)
          // The control: outside the sandbox the same binary does raise nobody to euid 0.
          if (isRoot) {
            fs.chmodSync(root, 0o755)
            const outside = ChildProcess.spawnSync("runuser", ["-u", "nobody", "--", suid, "-u"], { encoding: "utf8" })
            expect(outside.stdout).toBe("0\n")
          }
        }),
      TIMEOUT,
    )

    it.scoped(
      "reaches no Unix socket outside: the connection fails from node, curl and python, and the server sees nothing",
      () =>
        Effect.gen(function* () {
          const where = yield* scene(user)
          where.own()
          const socketPath = path.join(where.root, "service.sock")
          const service = yield* socketServer(socketPath)
          const abstract = `\0toolgate-escape-${process.pid}-${user}`
          const abstractService = yield* socketServer(abstract)
          // The target as a JavaScript string literal inside the shell's double quotes (`\\0` for an abstract name).
          const node = (target: string) =>
            `node -e "const s = require('net').connect('${target.replace("\0", "\\0")}'); s.on('data', d => console.log('got ' + d)); s.on('error', e => console.log('node ' + e.message))"`
          const commands = [
            node(socketPath),
            `curl -sS --max-time 5 --unix-socket ${socketPath} http://x/ 2>&1; echo rc=$?`,
            ...(hasPython
              ? [
                  `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${socketPath}'); print('got', s.recv(9))" 2>&1 | tail -1`,
                  `python3 -c "import socket; a, b = socket.socketpair(); a.send(b'pair'); print('pair ok', b.recv(4))"`,
                  `python3 -c "import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)" 2>&1 | tail -1`,
                ]
              : []),
          ]
          for (const network of [false, true]) {
            const results = yield* sandboxed(user, where, { sandbox: { mode: "bubblewrap", network } }, [
              ...commands,
              node(abstract),
            ])
            for (const result of results) expect(result.output).not.toContain("got")
            expect(results[0]!.output).toBe(`node connect EPERM ${socketPath}\n`)
            expect(results[1]!.output).toMatch(/rc=[1-9]/)
            if (hasPython) {
              expect(results[2]!.output).toContain("PermissionError")
              expect(results[3]!.output).toBe("pair ok b'pair'\n")
              expect(results[4]!.output).toContain("PermissionError")
            }
            expect(results.at(-1)!.output).toMatch(/^node connect EPERM /)
            expect(results[0]!.note).toMatch(/blocks Unix sockets/)
          }
          expect(service.connections()).toBe(0)
          expect(abstractService.connections()).toBe(0)
          // The control: the same client outside the sandbox is answered.
          const outside = yield* AppProcess.make.run(
            user === "root"
              ? { command: "/bin/sh", args: ["-c", node(socketPath)] }
              : { command: "runuser", args: ["-u", "nobody", "--", "/bin/sh", "-c", node(socketPath)] },
          )
          expect(Buffer.from(outside.stdout).toString("utf8")).toBe("got pong\n\n")
          expect(service.connections()).toBe(1)
        }),
      TIMEOUT,
    )

    it.scoped(
      "hides credential stores, system secrets, .env files and deny_read paths; templates and node_modules stay",
      () =>
        Effect.gen(function* () {
          const where = yield* scene(user)
          const { root, home } = where
          const write = (file: string, text: string) => {
            fs.mkdirSync(path.dirname(file), { recursive: true })
            fs.writeFileSync(file, text)
          }
          write(path.join(home, ".ssh", "id_ed25519"), "PRIVATE-SSH\n")
          write(path.join(home, ".aws", "credentials"), "AWS-SECRET\n")
          write(path.join(home, ".npmrc"), "//registry/:_authToken=NPM-SECRET\n")
          write(path.join(home, ".git-credentials"), "https://u:GIT-SECRET@host\n")
          write(path.join(root, ".env"), "DOTENV-SECRET\n")
          write(path.join(root, "app", ".ENV.local"), "LOCAL-SECRET\n")
          write(path.join(root, ".env.example"), "TEMPLATE\n")
          write(path.join(root, "secrets", "token"), "DENIED-SECRET\n")
          write(path.join(root, "node_modules", "pkg", ".env"), "PACKAGE-ENV\n")
          // A family name pointing at a file outside the family: the target is what a reader gets, so it is hidden.
          write(path.join(root, "config", "prod-values.txt"), "LINKED-SECRET\n")
          fs.symlinkSync(path.join(root, "config", "prod-values.txt"), path.join(root, "linked.env"))
          where.own()
          const results = yield* sandboxed(user, where, { sandbox: { mode: "bubblewrap", deny_read: ["secrets"] } }, [
            `cat ${home}/.ssh/id_ed25519 ${home}/.aws/credentials 2>&1; cat ${home}/.npmrc ${home}/.git-credentials; ls -A ${home}/.ssh; ls -A ${home}/.aws; echo end`,
            "cat .env app/.ENV.local linked.env config/prod-values.txt; ls -A secrets; cat secrets/token 2>/dev/null; echo end",
            "head -c 64 /etc/shadow; echo end",
            "cat .env.example node_modules/pkg/.env",
            `echo changed > .env; echo w=$?; rm -f .env; echo rm=$?; mv .env moved.env; echo mv=$?`,
          ])
          // The directories are empty, the files read as empty.
          expect(results[0]!.output).toBe(
            [
              `cat: ${home}/.ssh/id_ed25519: No such file or directory`,
              `cat: ${home}/.aws/credentials: No such file or directory`,
              "end\n",
            ].join("\n"),
          )
          expect(results[1]!.output).toBe("end\n")
          expect(results[2]!.output).toBe("end\n")
          expect(results[3]!.output).toBe("TEMPLATE\nPACKAGE-ENV\n")
          expect(results[4]!.output).toMatch(/w=[1-9]/)
          expect(results[4]!.output).toMatch(/rm=[1-9]/)
          expect(results[4]!.output).toMatch(/mv=[1-9]/)
          expect(fs.readFileSync(path.join(root, ".env"), "utf8")).toBe("DOTENV-SECRET\n")
          expect(fs.existsSync(path.join(root, "moved.env"))).toBe(false)
          // Unsandboxed, nothing is hidden: the permission rules are what protects these files there.
          const plain = yield* sandboxed(user, where, { sandbox: { mode: "none" } }, ["cat .env"])
          expect(plain[0]!.output).toBe("DOTENV-SECRET\n")
        }),
      TIMEOUT,
    )

    it.scoped(
      "keeps every protected path read-only, missing ones too: creating one fails, and nothing is left on the host",
      () =>
        Effect.gen(function* () {
          const where = yield* scene(user)
          const { root } = where
          fs.mkdirSync(path.join(root, ".agents", "skills", "a"), { recursive: true })
          fs.writeFileSync(path.join(root, ".agents", "skills", "a", "SKILL.md"), "original\n")
          where.own()
          const before = fs.readdirSync(root).sort()
          const results = yield* sandboxed(user, where, { sandbox: { mode: "bubblewrap" } }, [
            `echo '{"permissions":[]}' > toolgate.json; echo json=$?; echo '{}' > toolgate.jsonc; echo jsonc=$?`,
            "mkdir -p .toolgate/agents 2>&1; echo dir=$?; mkdir -p .claude/skills/evil; echo claude=$?; echo x > .claude/skills/evil/SKILL.md; echo skill=$?",
            "mv .claude .claude-old; echo mv=$?; mkdir -p .claude/settings && echo ok > .claude/settings/x; echo other=$?",
            "echo evil > .agents/skills/a/SKILL.md; echo agents=$?; rm -rf .agents; echo rm=$?; git init -q . 2>&1; echo git=$?",
            "echo fine > ordinary.txt && cat ordinary.txt",
          ])
          const text = results.map((result) => result.output).join("")
          for (const field of ["json", "jsonc", "dir", "claude", "skill", "mv", "agents", "rm", "git"]) {
            expect(text).toMatch(new RegExp(`${field}=[1-9]`))
          }
          expect(text).toContain("other=0")
          expect(results[4]!.output).toBe("fine\n")
          expect(fs.readFileSync(path.join(root, ".agents", "skills", "a", "SKILL.md"), "utf8")).toBe("original\n")
          // Every placeholder is gone; what the command legitimately wrote stays.
          expect(fs.readdirSync(root).sort()).toEqual([...before, ".claude", "ordinary.txt"].sort())
          expect(fs.readdirSync(path.join(root, ".claude"))).toEqual(["settings"])
          for (const name of ["toolgate.json", "toolgate.jsonc", ".toolgate", ".git"]) {
            expect(fs.existsSync(path.join(root, name))).toBe(false)
          }
        }),
      TIMEOUT,
    )

    it.scoped(
      "gives each project its own tmp directory: one project's sandbox cannot see another's files",
      () =>
        Effect.gen(function* () {
          const first = yield* scene(user)
          const second = yield* scene(user)
          const shared = { ...second, tmp: first.tmp }
          first.own()
          second.own()
          const tmpOf = (root: string) => path.join(first.tmp, Project.storageKey("global", root))
          const a = tmpOf(first.root)
          const b = tmpOf(second.root)
          const written = yield* sandboxed(user, first, { sandbox: { mode: "bubblewrap" } }, [
            `echo from-a > ${a}/note && cat ${a}/note; echo x > ${first.tmp}/shared; echo shared=$?`,
          ])
          // The shared directory is not bound: the write lands in the sandbox's private /tmp.
          expect(written[0]!.output).toMatch(/^from-a\n/)
          expect(fs.readFileSync(path.join(a, "note"), "utf8")).toBe("from-a\n")
          expect(fs.existsSync(path.join(first.tmp, "shared"))).toBe(false)
          const other = yield* sandboxed(user, shared, { sandbox: { mode: "bubblewrap" } }, [
            `ls -A ${first.tmp}; cat ${a}/note 2>/dev/null; echo end`,
          ])
          expect(other[0]!.output).toBe(`${path.basename(b)}\nend\n`)
        }),
      TIMEOUT,
    )
  })
}
