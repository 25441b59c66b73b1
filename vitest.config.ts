import { defineConfig } from "vitest/config"

// The root runs every package's own vitest project; the JSON report feeds .ci/run's summary line.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts"],
    // One module graph per worker, not one per test file, in every project (a project's own `isolate` is not read
    // by a root run). Test files leave no global state behind: AGENTS.md, "Commands".
    isolate: false,
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
})
