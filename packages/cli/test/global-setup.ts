/**
 * Vitest global setup of the cli project: bundles `toolgate` (and `toolgate-mcp`, whose start-up errors the cli
 * project also checks) and the decisions test's `fixtures/journal-session.ts` from the TypeScript sources once per
 * run into
 * `test-bundle/` (see `BIN` in support.ts), so every spawned CLI starts from one file instead of compiling the
 * sources through tsx on each start.
 */
// @ts-expect-error: a plain ES module script without declarations
import { bundle } from "../../../scripts/bundle-bins.mjs"

export const setup = async (): Promise<void> => {
  await bundle({
    entries: {
      toolgate: "packages/cli/src/main.ts",
      "toolgate-mcp": "packages/mcp/src/main.ts",
      "journal-session": "packages/cli/test/fixtures/journal-session.ts",
    },
    outdir: "packages/cli/test-bundle",
    source: true,
  })
}
