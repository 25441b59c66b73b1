#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's ESM loader: there is no build step. A failure to load them is
// printed as one line (the message and its causes) with exit code 1.
import { register } from "tsx/esm/api"

const oneLine = (error) => {
  const parts = []
  for (let current = error; current != null && parts.length < 8; current = current.cause) {
    const message = typeof current === "object" ? String(current.message ?? current) : String(current)
    const code = typeof current === "object" && typeof current.code === "string" ? `${current.code}: ` : ""
    parts.push(code + message.replace(/\s+/g, " ").trim())
  }
  return parts.join(": ")
}

try {
  register()
  await import("../src/main.ts")
} catch (error) {
  process.stderr.write(`toolgate-mcp: ${oneLine(error)}\n`)
  process.exit(1)
}
