/**
 * The availability probe of the bubblewrap sandbox: one run of `bwrap … true` with the same privilege settings and
 * seccomp program every call uses, so a kernel without user namespaces, a bubblewrap without `--disable-userns`
 * (before 0.8) or an architecture without a seccomp program is found when the Location is built, not on a call.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as AppProcess from "../../app-process.js"
import { bubblewrapArgs, type Plan } from "./mounts.js"
import * as Seccomp from "./seccomp.js"

/**
 * The seccomp program of this runner's architecture, or why there is none.
 *
 * @since 0.3.0
 * @category utilities
 */
export const seccompProgram = (
  policy: Seccomp.Policy,
): { readonly program: Uint8Array } | { readonly reason: string } => {
  const arch = Seccomp.archOf(process.arch)
  if (arch === undefined) return { reason: `no seccomp program for the ${process.arch} architecture` }
  return { program: Seccomp.program(arch, policy) }
}

/**
 * `undefined` when `executable` runs a sandbox here, else why not.
 *
 * @since 0.3.0
 * @category utilities
 */
export const probe = (
  executable: string,
  user: Plan["user"],
  policy: Seccomp.Policy,
): Effect.Effect<string | undefined, never, AppProcess.Service> =>
  Effect.gen(function* () {
    const seccomp = seccompProgram(policy)
    if ("reason" in seccomp) return seccomp.reason
    const process = yield* AppProcess.Service
    const plan: Plan = {
      writable: [],
      readOnly: [],
      network: false,
      cwd: "/",
      seccompFd: AppProcess.FIRST_INPUT_FD,
      ...(user === undefined ? {} : { user }),
    }
    return yield* process
      .run(
        { command: executable, args: bubblewrapArgs(plan, ["true"]), inputs: [seccomp.program] },
        { timeout: "10 seconds", maxErrorBytes: 4096 },
      )
      .pipe(
        Effect.map((result) =>
          result.exitCode === 0
            ? undefined
            : `${executable} exited ${result.exitCode}: ${Buffer.from(result.stderr).toString("utf8").trim()}`,
        ),
        Effect.catchAll((error) => Effect.succeed(error.message)),
      )
  })
