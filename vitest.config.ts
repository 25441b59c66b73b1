import * as os from "node:os"
import { defineConfig } from "vitest/config"

// The root runs every package's own vitest project; the JSON report feeds .ci/run's summary line.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts"],
    // One module graph per worker, not one per test file, in every project (a project's own `isolate` is not read
    // by a root run). Test files leave no global state behind: AGENTS.md, "Commands".
    isolate: false,
    // Vitest's default (one worker fewer than the cores), but never fewer than two: much of the suite waits on child
    // processes, servers and real timers, so on two cores a second worker nearly halves the run (docs/performance.md,
    // "Test time").
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
})
