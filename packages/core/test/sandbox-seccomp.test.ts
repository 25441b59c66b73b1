/**
 * The sandbox's seccomp program, run by a classic-BPF interpreter written here from the kernel's semantics, and
 * compared with a plain model of what it must decide for every architecture, system call and argument.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Seccomp from "../src/world/sandbox/internal/seccomp.js"

interface Data {
  readonly nr: number
  readonly arch: number
  readonly args: ReadonlyArray<number>
}

/** `struct seccomp_data` as the kernel lays it out (little endian). */
const layout = (data: Data): DataView => {
  const view = new DataView(new ArrayBuffer(64))
  view.setUint32(0, data.nr >>> 0, true)
  view.setUint32(4, data.arch >>> 0, true)
  data.args.forEach((arg, index) => view.setUint32(16 + 8 * index, arg >>> 0, true))
  return view
}

/** Runs the program the way the kernel does; throws on anything a valid filter may not do. */
const execute = (bytes: Uint8Array, data: Data): number => {
  expect(bytes.byteLength % 8).toBe(0)
  const program = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const count = bytes.byteLength / 8
  const input = layout(data)
  let accumulator = 0
  for (let pc = 0; pc < count; pc++) {
    const code = program.getUint16(pc * 8, true)
    const jt = program.getUint8(pc * 8 + 2)
    const jf = program.getUint8(pc * 8 + 3)
    const k = program.getUint32(pc * 8 + 4, true)
    switch (code) {
      case Seccomp.LD_W_ABS:
        if (k % 4 !== 0 || k + 4 > 64) throw new Error(`bad load at ${pc}`)
        accumulator = input.getUint32(k, true)
        break
      case Seccomp.ALU_AND_K:
        accumulator = (accumulator & k) >>> 0
        break
      case Seccomp.JEQ_K:
        pc += accumulator === k ? jt : jf
        break
      case Seccomp.JGE_K:
        pc += accumulator >= k ? jt : jf
        break
      case Seccomp.JSET_K:
        pc += (accumulator & k) !== 0 ? jt : jf
        break
      case Seccomp.RET_K:
        return k
      default:
        throw new Error(`unknown opcode ${code} at ${pc}`)
    }
    if (pc + 1 > count) throw new Error("jump past the end")
  }
  throw new Error("fell off the end")
}

const ARCHES: ReadonlyArray<Seccomp.Arch> = ["x86_64", "aarch64"]
const EPERM = Seccomp.RET_ERRNO | Seccomp.EPERM
const ENOSYS = Seccomp.RET_ERRNO | Seccomp.ENOSYS
const REFUSED: ReadonlyArray<Seccomp.Syscall> = [
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

/** What the program must return, written independently of how it is built. */
const model = (arch: Seccomp.Arch, policy: Seccomp.Policy, data: Data): number => {
  if (data.arch >>> 0 !== Seccomp.AUDIT_ARCH[arch]) return Seccomp.RET_KILL_PROCESS
  if (arch === "x86_64" && data.nr >>> 0 >= 0x40000000) return Seccomp.RET_KILL_PROCESS
  const names = Seccomp.SYSCALLS[arch]
  const name = (Object.keys(names) as Array<Seccomp.Syscall>).find((key) => names[key] === data.nr >>> 0)
  const arg = (n: number) => (data.args[n] ?? 0) >>> 0
  switch (name) {
    case "socket":
      return policy.blockUnixSockets && arg(0) === 1 ? EPERM : Seccomp.RET_ALLOW
    case "socketpair": {
      const type = arg(1) & 0xf
      return policy.blockUnixSockets && type !== 1 && type !== 5 ? EPERM : Seccomp.RET_ALLOW
    }
    case "clone":
      return (arg(0) & 0x7e020000) !== 0 ? EPERM : Seccomp.RET_ALLOW
    case "unshare":
      return (arg(0) & 0x7e020080) !== 0 ? EPERM : Seccomp.RET_ALLOW
    case "clone3":
      return ENOSYS
    case undefined:
      return Seccomp.RET_ALLOW
    default:
      return REFUSED.includes(name) ? EPERM : Seccomp.RET_ALLOW
  }
}

const u32 = FastCheck.integer({ min: 0, max: 0xffffffff })

describe("the sandbox's seccomp program", () => {
  it("decides like the model for every architecture, system call and argument", () => {
    const interesting = (arch: Seccomp.Arch) =>
      FastCheck.oneof(
        FastCheck.constantFrom(...Object.values(Seccomp.SYSCALLS[arch])),
        FastCheck.integer({ min: 0, max: 600 }),
        u32,
      )
    const argument = FastCheck.oneof(
      FastCheck.constantFrom(0, 1, 2, 3, 5, 10, 16, 0x80000 | 1, 0x800 | 2, 0x80, 0x10000000, 0x20000, 0x11),
      u32,
    )
    for (const arch of ARCHES) {
      for (const blockUnixSockets of [true, false]) {
        const policy = { blockUnixSockets }
        const program = Seccomp.program(arch, policy)
        FastCheck.assert(
          FastCheck.property(
            interesting(arch),
            FastCheck.oneof(
              FastCheck.constant(Seccomp.AUDIT_ARCH[arch]),
              FastCheck.constantFrom(...Object.values(Seccomp.AUDIT_ARCH), 0x40000003),
              u32,
            ),
            FastCheck.array(argument, { minLength: 6, maxLength: 6 }),
            (nr, archValue, args) => {
              const data = { nr, arch: archValue, args }
              return execute(program, data) === model(arch, policy, data)
            },
          ),
          { numRuns: 3000 },
        )
      }
    }
  })

  it("refuses AF_UNIX sockets and datagram pairs but keeps stream and seqpacket pairs", () => {
    for (const arch of ARCHES) {
      const program = Seccomp.program(arch, { blockUnixSockets: true })
      const { socket, socketpair } = Seccomp.SYSCALLS[arch]
      const run = (nr: number, args: ReadonlyArray<number>) =>
        execute(program, { nr, arch: Seccomp.AUDIT_ARCH[arch], args })
      expect(run(socket, [1, 1, 0])).toBe(EPERM)
      expect(run(socket, [1, 0x80801, 0])).toBe(EPERM)
      expect(run(socket, [2, 1, 0])).toBe(Seccomp.RET_ALLOW)
      expect(run(socket, [10, 2, 0])).toBe(Seccomp.RET_ALLOW)
      expect(run(socketpair, [1, 1 | 0x80000, 0])).toBe(Seccomp.RET_ALLOW)
      expect(run(socketpair, [1, 5, 0])).toBe(Seccomp.RET_ALLOW)
      expect(run(socketpair, [1, 2, 0])).toBe(EPERM)
      expect(run(socketpair, [1, 3, 0])).toBe(EPERM)
      const open = Seccomp.program(arch, { blockUnixSockets: false })
      expect(execute(open, { nr: socket, arch: Seccomp.AUDIT_ARCH[arch], args: [1, 1, 0] })).toBe(Seccomp.RET_ALLOW)
    }
  })

  it("kills another ABI: 32-bit x86, the x32 numbers, and x86_64 calls under the aarch64 program", () => {
    const x86 = Seccomp.program("x86_64", { blockUnixSockets: true })
    expect(execute(x86, { nr: 1, arch: 0x40000003, args: [] })).toBe(Seccomp.RET_KILL_PROCESS)
    expect(execute(x86, { nr: 0x40000000 | 41, arch: Seccomp.AUDIT_ARCH.x86_64, args: [1] })).toBe(
      Seccomp.RET_KILL_PROCESS,
    )
    const arm = Seccomp.program("aarch64", { blockUnixSockets: true })
    expect(execute(arm, { nr: 41, arch: Seccomp.AUDIT_ARCH.x86_64, args: [1] })).toBe(Seccomp.RET_KILL_PROCESS)
  })

  it("has no program for an architecture it does not know", () => {
    expect(Seccomp.archOf("x64")).toBe("x86_64")
    expect(Seccomp.archOf("arm64")).toBe("aarch64")
    for (const other of ["ia32", "arm", "riscv64", "ppc64", "s390x", "loong64", "mips"]) {
      expect(Seccomp.archOf(other)).toBeUndefined()
    }
  })

  it("encodes struct sock_filter little-endian, 8 bytes per instruction", () => {
    const bytes = Seccomp.encode([{ code: 0x20, jt: 1, jf: 2, k: 0xc000003e }])
    expect([...bytes]).toEqual([0x20, 0x00, 0x01, 0x02, 0x3e, 0x00, 0x00, 0xc0])
  })
})
