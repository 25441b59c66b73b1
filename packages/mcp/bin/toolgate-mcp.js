#!/usr/bin/env node
// Runs the built JavaScript (`tsc -b` writes dist/; the repository's `prepare` script builds it on install).
await import("../dist/main.js")
