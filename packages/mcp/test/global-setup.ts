/**
 * Vitest global setup of the mcp project: bundles the `toolgate-mcp` command line, the test server entry and the fixture MCP server from
 * the TypeScript sources once per run into `test-bundle/` (see `serverArgs` in support/client.ts), so every spawned
 * server starts from one file instead of compiling the sources through tsx on each start.
 */
// @ts-expect-error: a plain ES module script without declarations
import { bundle } from "../../../scripts/bundle-bins.mjs"

export const setup = async (): Promise<void> => {
  await bundle({
    entries: { "toolgate-mcp": "packages/mcp/src/main.ts", serve: "packages/mcp/test/support/entry.ts",
      "mcp-fixture": "packages/mcp/test/fixtures/mcp-fixture.ts",
    },
    outdir: "packages/mcp/test-bundle",
    source: true,
  })
}
