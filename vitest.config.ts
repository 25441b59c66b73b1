import { defineConfig } from "vitest/config"

// The root runs every package's own vitest project; the JSON report feeds .ci/run's summary line.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts"],
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
})
