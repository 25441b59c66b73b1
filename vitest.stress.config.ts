import { defineConfig } from "vitest/config"

// The stress project of every package (`*.stress.test.ts`); its JSON report feeds .ci/run's summary line too.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.stress.config.ts"],
    passWithNoTests: true,
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-stress-results.json" },
  },
})
