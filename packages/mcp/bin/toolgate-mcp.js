#!/usr/bin/env node
// Runs the bundled bin (bundle/, written by scripts/bundle-bins.mjs after `tsc -b`; the repository's `prepare`
// script builds both on install).
// A failure to load it is printed as one line (the message and its causes) with exit code 1.
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
  await import("../bundle/toolgate-mcp.js")
} catch (error) {
  process.stderr.write(`toolgate-mcp: ${oneLine(error)}\n`)
  process.exit(1)
}
