import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { Patch } from "../src/index.js"

const wrap = (...body: ReadonlyArray<string>) => ["*** Begin Patch", ...body, "*** End Patch"].join("\n")

describe("Patch.parse", () => {
  it("parses add, update and delete hunks", () => {
    const hunks = Patch.parse(
      wrap(
        "*** Add File: nested/new.txt",
        "+created",
        "+second",
        "*** Update File: update.txt",
        "@@ section",
        " keep",
        "-before",
        "+after",
        "*** Delete File: remove.txt",
      ),
    )
    expect(hunks).toEqual([
      { type: "add", path: "nested/new.txt", contents: "created\nsecond" },
      {
        type: "update",
        path: "update.txt",
        chunks: [{ oldLines: ["keep", "before"], newLines: ["keep", "after"], changeContext: "section" }],
      },
      { type: "delete", path: "remove.txt" },
    ])
  })

  it("strips a heredoc wrapper", () => {
    const text = ["cat <<'EOF'", wrap("*** Delete File: gone.txt"), "EOF"].join("\n")
    expect(Patch.parse(text)).toEqual([{ type: "delete", path: "gone.txt" }])
    expect(Patch.stripHeredoc(`<<"END"\nbody\nEND`)).toBe("body")
  })

  it("parses *** End of File and several chunks", () => {
    const [hunk] = Patch.parse(wrap("*** Update File: a.txt", "@@", "-x", "+y", "@@", "-z", "*** End of File"))
    expect(hunk).toEqual({
      type: "update",
      path: "a.txt",
      chunks: [
        { oldLines: ["x"], newLines: ["y"] },
        { oldLines: ["z"], newLines: [], endOfFile: true },
      ],
    })
  })

  it("keeps a move path", () => {
    const [hunk] = Patch.parse(wrap("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-x", "+y"))
    expect(hunk).toMatchObject({ type: "update", path: "a.txt", movePath: "b.txt" })
  })

  it("malformed bodies throw with the interface messages", () => {
    expect(() => Patch.parse("nothing here")).toThrow("Invalid patch format: missing Begin/End markers")
    expect(() => Patch.parse("*** End Patch\n*** Begin Patch")).toThrow(
      "Invalid patch format: missing Begin/End markers",
    )
    expect(() => Patch.parse(wrap("*** Add File: a.txt", "oops"))).toThrow("Invalid add file line: oops")
    expect(() => Patch.parse(wrap("*** Add File:   "))).toThrow("Invalid add file path")
    expect(() => Patch.parse(wrap("*** Delete File:"))).toThrow("Invalid delete file path")
    expect(() => Patch.parse(wrap("*** Update File:"))).toThrow("Invalid update file path")
    expect(() => Patch.parse(wrap("*** Update File: a", "*** Move to: ", "@@"))).toThrow("Invalid move file path")
    expect(() => Patch.parse(wrap("*** Update File: a.txt"))).toThrow(
      "Invalid update hunk for a.txt: expected at least one @@ chunk",
    )
    // A first chunk without `@@` is accepted (Codex's lenient form); a line that cannot start a chunk is not.
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "?x"))).toThrow("Invalid update file line: ?x")
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "@@ one", "-x", "?y"))).toThrow(
      "Invalid update chunk line: ?y",
    )
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "@@", "?x"))).toThrow("Invalid update chunk line: ?x")
    expect(() => Patch.parse(wrap("random"))).toThrow("Invalid patch line: random")
    const thrown = (() => {
      try {
        Patch.parse("x")
      } catch (e) {
        return e
      }
    })()
    expect(thrown).toBeInstanceOf(Patch.ParseError)
    expect((thrown as Patch.ParseError)._tag).toBe("Patch.ParseError")
  })

  it("an empty envelope has no hunks", () => {
    expect(Patch.parse(wrap())).toEqual([])
  })
})

describe("Patch.derive", () => {
  it("fuzzy derive keeps the BOM", () => {
    const result = Patch.derive("a.txt", [{ oldLines: ["old"], newLines: ["new"] }], "\uFEFF  old   \n")
    expect(result).toEqual({ content: "new\n", bom: true })
    expect(Patch.joinBom(result.content, result.bom)).toBe("\uFEFFnew\n")
    expect(Patch.joinBom("x", true)).toBe("\uFEFFx")
    expect(Patch.joinBom("\uFEFFx", true)).toBe("\uFEFFx")
    expect(Patch.joinBom("\uFEFFx", false)).toBe("x")
  })

  it("EOF-anchored chunk matches the last occurrence", () => {
    const original = "marker\nmiddle\nmarker\nend\n"
    const anchored = Patch.derive(
      "a.txt",
      [{ oldLines: ["marker", "end"], newLines: ["changed", "end"], endOfFile: true }],
      original,
    )
    expect(anchored.content).toBe("marker\nmiddle\nchanged\nend\n")
    const single = Patch.derive(
      "a.txt",
      [{ oldLines: ["marker"], newLines: ["changed"], endOfFile: true }],
      "marker\nmiddle\nmarker\n",
    )
    expect(single.content).toBe("marker\nmiddle\nchanged\n")
    const unanchored = Patch.derive(
      "a.txt",
      [{ oldLines: ["marker"], newLines: ["changed"] }],
      "marker\nmiddle\nmarker\n",
    )
    expect(unanchored.content).toBe("changed\nmiddle\nmarker\n")
  })

  it("normalises Unicode punctuation in the last comparator", () => {
    const original = "say \u201Chello\u201D \u2014 it\u2019s\u2026\u00A0done\n"
    const result = Patch.derive("a.txt", [{ oldLines: [`say "hello" - it's... done`], newLines: ["ok"] }], original)
    expect(result).toEqual({ content: "ok\n", bom: false })
  })

  it("seeks the change context, then the old lines after it", () => {
    const original = "a\nx\nsection\nx\n"
    const result = Patch.derive("f", [{ changeContext: "section", oldLines: ["x"], newLines: ["y"] }], original)
    expect(result.content).toBe("a\nx\nsection\ny\n")
    expect(() => Patch.derive("f", [{ changeContext: "missing", oldLines: ["x"], newLines: [] }], original)).toThrow(
      "Failed to find context 'missing' in f",
    )
  })

  it("appends pure additions at the end and always ends with a newline", () => {
    expect(Patch.derive("f", [{ oldLines: [], newLines: ["tail"] }], "a\nb").content).toBe("a\nb\ntail\n")
  })

  it("retries without a trailing empty old line", () => {
    const result = Patch.derive("f", [{ oldLines: ["b", ""], newLines: ["c", ""] }], "a\nb\n")
    expect(result.content).toBe("a\nc\n")
  })

  it("reports missing lines with the interface message", () => {
    expect(() => Patch.derive("f.txt", [{ oldLines: ["nope", "never"], newLines: [] }], "a\n")).toThrow(
      "Failed to find expected lines in f.txt:\nnope\nnever",
    )
    expect(() => Patch.derive("f.txt", [{ oldLines: ["nope"], newLines: [] }], "a\n")).toThrow(Patch.MatchError)
  })

  it("applies several chunks bottom-up", () => {
    const result = Patch.derive(
      "f",
      [
        { oldLines: ["1"], newLines: ["one", "uno"] },
        { oldLines: ["3"], newLines: [] },
      ],
      "1\n2\n3\n4\n",
    )
    expect(result.content).toBe("one\nuno\n2\n4\n")
  })

  it("property: replacing one exact line changes only that line", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 12 }),
        FastCheck.nat(),
        (lines, pick) => {
          const index = pick % lines.length
          const target = lines[index]!
          const first = lines.indexOf(target)
          const result = Patch.derive("f", [{ oldLines: [target], newLines: ["REPLACED"] }], `${lines.join("\n")}\n`)
          const expected = [...lines]
          expected[first] = "REPLACED"
          return result.content === `${expected.join("\n")}\n` && result.bom === false
        },
      ),
    )
  })
})

describe("Patch.parse lenient forms", () => {
  const apply = (patch: string, original: string) => {
    const [hunk] = Patch.parse(patch)
    if (hunk?.type !== "update") throw new Error("expected an update hunk")
    return Patch.derive(hunk.path, hunk.chunks, original).content
  }

  it("reads a blank line inside a chunk as an empty context line", () => {
    const patch = wrap("*** Update File: a.txt", "@@", " one", "", "-two", "+TWO")
    expect(Patch.parse(patch)).toEqual([
      { type: "update", path: "a.txt", chunks: [{ oldLines: ["one", "", "two"], newLines: ["one", "", "TWO"] }] },
    ])
    expect(apply(patch, "one\n\ntwo\nthree\n")).toBe("one\n\nTWO\nthree\n")
  })

  it("accepts indented *** headers", () => {
    const patch = wrap(
      "  *** Update File: a.txt",
      "@@",
      "-x",
      "+y",
      "\t*** Delete File: b.txt",
      "   *** Add File: c.txt",
      "+c",
    )
    expect(Patch.parse(patch).map((hunk) => [hunk.type, hunk.path])).toEqual([
      ["update", "a.txt"],
      ["delete", "b.txt"],
      ["add", "c.txt"],
    ])
  })

  it("accepts a first chunk without @@", () => {
    const patch = wrap("*** Update File: a.txt", " keep", "-old", "+new")
    expect(apply(patch, "keep\nold\n")).toBe("keep\nnew\n")
    const two = wrap("*** Update File: a.txt", "-a", "+A", "@@ c", "-d", "+D")
    expect(apply(two, "a\nb\nc\nd\n")).toBe("A\nb\nc\nD\n")
  })

  it("accepts a trailing blank line before *** End Patch (Codex's fixtures end chunks with one)", () => {
    const patch = ["*** Begin Patch", "*** Update File: a.txt", "@@", "-x", "+y", "", "*** End Patch"].join("\n")
    expect(Patch.parse(patch)).toEqual([
      { type: "update", path: "a.txt", chunks: [{ oldLines: ["x"], newLines: ["y"] }] },
    ])
    expect(apply(patch, "x\nz\n")).toBe("y\nz\n")
    const add = ["*** Begin Patch", "*** Add File: n.txt", "+n", "", "*** End Patch"].join("\n")
    expect(Patch.parse(add)).toEqual([{ type: "add", path: "n.txt", contents: "n" }])
    const between = ["*** Begin Patch", "*** Delete File: a", "", "*** Delete File: b", "*** End Patch"].join("\n")
    expect(Patch.parse(between).map((hunk) => hunk.path)).toEqual(["a", "b"])
  })

  it("refuses an empty @@ chunk instead of rewriting the file as a no-op", () => {
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "@@"))).toThrow(
      "Invalid update hunk for a.txt: an @@ chunk must contain at least one line",
    )
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "@@ ctx", "@@", "-x", "+y"))).toThrow(
      "Invalid update hunk for a.txt: an @@ chunk must contain at least one line",
    )
    expect(() => Patch.parse(wrap("*** Update File: a.txt", "@@", "", "*** Delete File: b"))).toThrow(
      "Invalid update hunk for a.txt: an @@ chunk must contain at least one line",
    )
  })

  it("still refuses a blank line inside an added file's body", () => {
    expect(() => Patch.parse(wrap("*** Add File: a.txt", "+a", "", "+b"))).toThrow("Invalid add file line: ")
  })
})
