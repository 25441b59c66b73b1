import { defineConfig } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.js"

// The stress project: generated, differential and load suites that take minutes, run by `.ci/run` and
// `npx -y pnpm@12.21.0 test:stress`, not by the default `test` a developer runs.
export default defineConfig({
  ...sourceResolution,
  test: {
    name: "core-stress",
    include: ["test/**/*.stress.test.ts"],
    environment: "node",
    // The child-process entries bundled from the sources once per run (test/support/bundle-setup.ts).
    globalSetup: ["test/support/bundle-setup.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
})
