import { configDefaults, defineConfig } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.js"

export default defineConfig({
  ...sourceResolution,
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    // Stress, differential and load suites run in the separate stress project (vitest.stress.config.ts).
    exclude: [...configDefaults.exclude, "test/**/*.stress.test.ts"],
    environment: "node",
    // One throwaway Postgres server per run for the engine suites (test/support/engines.ts).
    globalSetup: ["test/support/postgres-setup.ts"],
    testTimeout: 20_000,
  },
})
