/**
 * The advisory scan of a bash command's absolute arguments (docs/shell.md, "How a command is decided"): the external
 * directories they point into become warnings in the output. It never asks and never blocks: the gate is
 * `ShellPlan`, which reads the parsed command; this token scan is only the reference's best-effort notice.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as LocationMutation from "../../world/location-mutation.js"

/**
 * The advisory warning for an external directory referenced by a command argument.
 *
 * @since 0.1.0
 * @category utilities
 */
export const externalWarning = (directory: string): string =>
  `Command argument references external directory ${path.join(directory, "*").replaceAll("\\", "/")}. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`

const TOKEN = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g

/**
 * The command's absolute arguments, unquoted and without trailing `;`, `,`, `|` or `&`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const absoluteArguments = (command: string): ReadonlyArray<string> =>
  (command.match(TOKEN) ?? [])
    .map((token) => token.replace(/^(['"])(.*)\1$/, "$2").replace(/[;,|&]+$/, ""))
    .filter((value) => value !== "" && path.isAbsolute(value))

/**
 * The insertion-ordered external directories that absolute arguments point into (realpaths where they exist).
 * Advisory only: this never asks and never blocks.
 *
 * @since 0.1.0
 * @category utilities
 */
export const externalDirectories = (
  command: string,
  workdir: string,
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const real = (target: string) => fs.realPath(target).pipe(Effect.orElseSucceed(() => path.resolve(target)))
    const directories = new Set<string>()
    for (const argument of absoluteArguments(command)) {
      const resolved = yield* real(argument)
      if (LocationMutation.isWithin(workdir, resolved)) continue
      directories.add(yield* real(path.dirname(resolved)))
    }
    return Array.from(directories)
  })
