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
    // One throwaway Postgres server per run for the engine suites (test/support/engines.ts); the child-process
    // entries bundled from the sources once per run (test/support/bundle-setup.ts).
    globalSetup: ["test/support/postgres-setup.ts", "test/support/bundle-setup.ts"],
    // One module graph per worker instead of one per file (here for `vitest run` in this folder; the root config sets
    // the same for `pnpm test`): importing the sources again for every file was a third of the suite's time. A file must leave no global state behind (AGENTS.md, "Tests"); effect-it-reset.ts undoes the
    // one piece @effect/vitest leaves (its `layer(...)` rebinds the shared `it`).
    isolate: false,
    setupFiles: ["test/support/effect-it-reset.ts"],
    testTimeout: 20_000,
  },
})
