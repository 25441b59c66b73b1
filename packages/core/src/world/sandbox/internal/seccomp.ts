/**
 * The seccomp program a bubblewrap sandbox runs under (`bwrap --seccomp FD`): classic BPF over `struct seccomp_data`,
 * built here and nowhere else, pure and unit-tested by interpreting it.
 *
 * What it does, in order:
 *
 * 1. **Architecture.** Only the architecture the program was built for passes (x86_64 or aarch64); any other ABI —
 *    32-bit x86 through `int 0x80`, and the x32 ABI's numbers on x86_64 — kills the process. A runner on any other
 *    architecture has no program at all, and the sandbox is unavailable there.
 * 2. **Unix sockets** (unless the configuration allows named ones): `socket(AF_UNIX, …)` fails with `EPERM`, so no
 *    filesystem or abstract socket outside the sandbox can be reached. `socketpair` stays allowed for stream and
 *    seqpacket pairs — libuv and Node build their child pipes from them, and a connected pair cannot be pointed
 *    anywhere else — but not for datagram pairs, whose `sendto` can name any socket path.
 * 3. **Namespaces and mounts**: `clone` with a namespace flag, `unshare` with one, `setns`, `mount`, `umount2`,
 *    `pivot_root`, `chroot` and the new mount API (`open_tree` … `mount_setattr`) fail with `EPERM`; `clone3`
 *    fails with `ENOSYS`, because its flags sit behind a pointer the filter cannot read, and C libraries then fall
 *    back to `clone`, which it can. The sandbox has no capabilities, so the kernel refuses these anyway; the
 *    filter makes that independent of capability bookkeeping.
 * 4. **Kernel keyrings** (`add_key`, `request_key`, `keyctl`) fail with `EPERM`: keyrings belong to the host-side
 *    user, which a sandbox of the same user would otherwise share.
 * 5. **io_uring** (`io_uring_setup`, `…_enter`, `…_register`) fails with `EPERM`: its operations (sockets among
 *    them) are not system calls the filter sees. libuv falls back to its thread pool.
 *
 * Everything else is allowed: the filter narrows a few doors the mount plan and the dropped capabilities already
 * close or that nothing else can see; the kernel's own permission checks stay the main barrier.
 *
 * @since 0.3.0
 */

/**
 * The architectures a program can be built for.
 *
 * @since 0.3.0
 * @category models
 */
export type Arch = "x86_64" | "aarch64"

/**
 * `AUDIT_ARCH_*` of each architecture (`linux/audit.h`).
 *
 * @since 0.3.0
 * @category constants
 */
export const AUDIT_ARCH: Readonly<Record<Arch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }

/**
 * The x32 ABI's bit in a system call number on x86_64.
 *
 * @since 0.3.0
 * @category constants
 */
export const X32_SYSCALL_BIT = 0x40000000

/**
 * The system calls the program names.
 *
 * @since 0.3.0
 * @category models
 */
export type Syscall =
  | "socket"
  | "socketpair"
  | "clone"
  | "clone3"
  | "unshare"
  | "setns"
  | "mount"
  | "umount2"
  | "pivot_root"
  | "chroot"
  | "open_tree"
  | "move_mount"
  | "fsopen"
  | "fsconfig"
  | "fsmount"
  | "fspick"
  | "mount_setattr"
  | "add_key"
  | "request_key"
  | "keyctl"
  | "io_uring_setup"
  | "io_uring_enter"
  | "io_uring_register"

/**
 * Their numbers (`asm/unistd_64.h` for x86_64, `asm-generic/unistd.h` for aarch64).
 *
 * @since 0.3.0
 * @category constants
 */
export const SYSCALLS: Readonly<Record<Arch, Readonly<Record<Syscall, number>>>> = {
  x86_64: {
    socket: 41,
    socketpair: 53,
    clone: 56,
    clone3: 435,
    unshare: 272,
    setns: 308,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    chroot: 161,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
  },
  aarch64: {
    socket: 198,
    socketpair: 199,
    clone: 220,
    clone3: 435,
    unshare: 97,
    setns: 268,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    chroot: 51,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
  },
}

/**
 * @since 0.3.0
 *
 * @category constants
 */
export const AF_UNIX = 1
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const SOCK_STREAM = 1
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const SOCK_SEQPACKET = 5
/**
 * The type bits of a socket type argument (the rest are `SOCK_NONBLOCK`/`SOCK_CLOEXEC`).
 *
 * @since 0.3.0
 * @category constants
 */
export const SOCK_TYPE_MASK = 0xf
/**
 * `CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET` (`clone`'s low byte is the exit signal).
 *
 * @since 0.3.0
 * @category constants
 */
export const CLONE_NAMESPACES = 0x7e020000
/**
 * `CLONE_NAMESPACES | CLONE_NEWTIME`, for `unshare`.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNSHARE_NAMESPACES = CLONE_NAMESPACES | 0x80

/**
 * @since 0.3.0
 *
 * @category constants
 */
export const EPERM = 1
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const ENOSYS = 38

/**
 * @since 0.3.0
 *
 * @category constants
 */
export const RET_KILL_PROCESS = 0x80000000
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const RET_ERRNO = 0x00050000
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const RET_ALLOW = 0x7fff0000

// Classic BPF opcodes.
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const LD_W_ABS = 0x20
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const ALU_AND_K = 0x54
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const JEQ_K = 0x15
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const JGE_K = 0x35
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const JSET_K = 0x45
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const RET_K = 0x06

/**
 * `struct seccomp_data` offsets: the number, the architecture, the low 32 bits of argument `n` (little endian).
 *
 * @since 0.3.0
 * @category constants
 */
export const OFFSET_NR = 0
/**
 * @since 0.3.0
 *
 * @category constants
 */
export const OFFSET_ARCH = 4
/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const argOffset = (n: number): number => 16 + 8 * n

/**
 * One `struct sock_filter`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Instruction {
  readonly code: number
  readonly jt: number
  readonly jf: number
  readonly k: number
}

/**
 * What the program blocks beyond the fixed rules.
 *
 * @since 0.3.0
 * @category models
 */
export interface Policy {
  /** Refuse `socket(AF_UNIX, …)` and datagram socket pairs (off only when named sockets are allowed). */
  readonly blockUnixSockets: boolean
}

/**
 * The architecture of a Node `process.arch`, or `undefined` for one we build no program for.
 *
 * @since 0.3.0
 * @category utilities
 */
export const archOf = (nodeArch: string): Arch | undefined =>
  nodeArch === "x64" ? "x86_64" : nodeArch === "arm64" ? "aarch64" : undefined

type Target = "kill" | "eperm" | "enosys" | "allow"
type Jump = number | Target
/** An instruction whose jumps may name a shared return, resolved by `assemble`. */
interface Draft {
  readonly code: number
  readonly k: number
  readonly jt?: Jump
  readonly jf?: Jump
}

const ret = (k: number): Draft => ({ code: RET_K, k })
const ld = (offset: number): Draft => ({ code: LD_W_ABS, k: offset })

const RETURNS: Readonly<Record<Target, number>> = {
  kill: RET_KILL_PROCESS,
  eperm: RET_ERRNO | EPERM,
  enosys: RET_ERRNO | ENOSYS,
  allow: RET_ALLOW,
}
const TARGETS: ReadonlyArray<Target> = ["kill", "eperm", "enosys", "allow"]

/**
 * One rule: the body runs with the accumulator holding the system call number and its instructions must end in a
 * return (a jump target) on every path.
 */
interface Rule {
  readonly nr: number
  readonly body: ReadonlyArray<Draft>
}

const always = (target: Target): ReadonlyArray<Draft> => [{ code: JEQ_K, k: 0, jt: target, jf: target }]

/** Resolves named jumps to relative offsets into the shared returns appended at the end. */
const assemble = (drafts: ReadonlyArray<Draft>): ReadonlyArray<Instruction> => {
  const end = drafts.length
  const position = (target: Target) => end + TARGETS.indexOf(target)
  const resolve = (jump: Jump | undefined, at: number): number => {
    if (jump === undefined) return 0
    const offset = typeof jump === "number" ? jump : position(jump) - at - 1
    if (!Number.isInteger(offset) || offset < 0 || offset > 255) throw new Error(`jump out of range at ${at}`)
    return offset
  }
  const body = drafts.map((draft, at) => ({
    code: draft.code,
    jt: resolve(draft.jt, at),
    jf: resolve(draft.jf, at),
    k: draft.k >>> 0,
  }))
  return [...body, ...TARGETS.map((target) => ({ code: RET_K, jt: 0, jf: 0, k: RETURNS[target] >>> 0 }))]
}

/**
 * The program's instructions for `arch` under `policy`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const instructions = (arch: Arch, policy: Policy): ReadonlyArray<Instruction> => {
  const nr = SYSCALLS[arch]
  const rules: Array<Rule> = []
  if (policy.blockUnixSockets) {
    rules.push({ nr: nr.socket, body: [ld(argOffset(0)), { code: JEQ_K, k: AF_UNIX, jt: "eperm", jf: "allow" }] })
    rules.push({
      nr: nr.socketpair,
      body: [
        ld(argOffset(1)),
        { code: ALU_AND_K, k: SOCK_TYPE_MASK },
        { code: JEQ_K, k: SOCK_STREAM, jt: "allow", jf: 0 },
        { code: JEQ_K, k: SOCK_SEQPACKET, jt: "allow", jf: "eperm" },
      ],
    })
  }
  rules.push({
    nr: nr.clone,
    body: [ld(argOffset(0)), { code: JSET_K, k: CLONE_NAMESPACES, jt: "eperm", jf: "allow" }],
  })
  rules.push({ nr: nr.clone3, body: always("enosys") })
  rules.push({
    nr: nr.unshare,
    body: [ld(argOffset(0)), { code: JSET_K, k: UNSHARE_NAMESPACES, jt: "eperm", jf: "allow" }],
  })
  const refused: ReadonlyArray<Syscall> = [
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "add_key",
    "request_key",
    "keyctl",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
  ]
  for (const name of refused) rules.push({ nr: nr[name], body: always("eperm") })

  const drafts: Array<Draft> = [ld(OFFSET_ARCH), { code: JEQ_K, k: AUDIT_ARCH[arch], jt: 0, jf: "kill" }, ld(OFFSET_NR)]
  if (arch === "x86_64") drafts.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: "kill", jf: 0 })
  for (const rule of rules) {
    // Not this call: skip the body to the next rule's comparison.
    drafts.push({ code: JEQ_K, k: rule.nr, jt: 0, jf: rule.body.length })
    drafts.push(...rule.body)
  }
  drafts.push(ret(RET_ALLOW))
  return assemble(drafts)
}

/**
 * The program as the bytes `bwrap --seccomp` reads: `struct sock_filter` entries in little-endian order.
 *
 * @since 0.3.0
 * @category utilities
 */
export const encode = (program: ReadonlyArray<Instruction>): Uint8Array => {
  const bytes = new Uint8Array(program.length * 8)
  const view = new DataView(bytes.buffer)
  program.forEach((instruction, index) => {
    view.setUint16(index * 8, instruction.code, true)
    view.setUint8(index * 8 + 2, instruction.jt)
    view.setUint8(index * 8 + 3, instruction.jf)
    view.setUint32(index * 8 + 4, instruction.k, true)
  })
  return bytes
}

/**
 * The encoded program for `arch` under `policy`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const program = (arch: Arch, policy: Policy): Uint8Array => encode(instructions(arch, policy))
