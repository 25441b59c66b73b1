import { defineConfig } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.js"

export default defineConfig({
  ...sourceResolution,
  test: {
    name: "mcp",
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
  },
})
