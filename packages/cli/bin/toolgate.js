#!/usr/bin/env node
// Runs the built JavaScript (dist/, written by `tsc -b`; the repository's `prepare` script builds it on install).
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
  await import("../dist/main.js")
} catch (error) {
  process.stderr.write(`toolgate: ${oneLine(error)}\n`)
  process.exit(1)
}
