import { configDefaults, defineConfig } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.js"

export default defineConfig({
  ...sourceResolution,
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    // Stress, differential and load suites run in the separate stress project (vitest.stress.config.ts).
    exclude: [...configDefaults.exclude, "test/**/*.stress.test.ts"],
    environment: "node",
    // Bundles the bins from the sources once per run (test/global-setup.ts); the run's throwaway Postgres server for
    // `toolgate db` on Postgres (core's postgres-setup.ts: one server per run, shared with the core project).
    globalSetup: ["test/global-setup.ts", "../core/test/support/postgres-setup.ts"],
    // Most tests spawn the CLI (a bundle of the sources, built once per run) several times over.
    testTimeout: 120_000,
  },
})
