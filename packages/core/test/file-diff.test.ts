import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { FileDiff } from "../src/index.js"

describe("FileDiff", () => {
  it("builds a modified entry with the diff library's two-file patch and line counts", () => {
    const info = FileDiff.make({
      file: "hello.txt",
      before: "before\nrest\n",
      after: "after\nrest\n",
      status: "modified",
    })
    expect(info).toEqual({
      file: "hello.txt",
      status: "modified",
      additions: 1,
      deletions: 1,
      patch:
        "Index: hello.txt\n===================================================================\n" +
        "--- hello.txt\n+++ hello.txt\n@@ -1,2 +1,2 @@\n-before\n+after\n rest\n",
    })
    expect(Schema.is(FileDiff.Info)(info)).toBe(true)
  })

  it("counts an added and a deleted file", () => {
    expect(FileDiff.counts("", "a\nb\n")).toEqual({ additions: 2, deletions: 0 })
    expect(FileDiff.make({ file: "gone.txt", before: "remove\n", after: "", status: "deleted" })).toMatchObject({
      additions: 0,
      deletions: 1,
      status: "deleted",
    })
  })

  it("keeps only the optional fields that are set when decoding", () => {
    expect(Schema.decodeUnknownSync(FileDiff.Info)({ additions: 0, deletions: 0, extra: 1 })).toEqual({
      additions: 0,
      deletions: 0,
    })
  })
})
