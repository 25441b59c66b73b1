import { defineConfig } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.js"

export default defineConfig({
  ...sourceResolution,
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
  },
})
