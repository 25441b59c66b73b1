/**
 * Temp-directory fixtures: a real Location directory (realpath) and an outside directory, removed with the scope.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { Location } from "../../src/index.js"

/** Creates a fresh temp directory (realpath) that is removed when the scope closes. */
export const tempDir = (prefix = "toolgate-test-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
  )

/** A Location on `directory` in the `global` project, without database or git. */
export const locationLayer = (directory: string): Layer.Layer<Location.Service> =>
  Location.layerWith({ directory, project: { id: "global", directory: path.parse(directory).root } })
