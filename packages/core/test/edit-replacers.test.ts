import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { EditTool } from "../src/index.js"
import * as Replacers from "../src/builtin/edit/replacers.js"

const { replacers } = EditTool
const run = (replacer: Replacers.Replacer, content: string, find: string) => [...replacer(content, find)]

describe("edit replacers", () => {
  it("are exported in the fixed order", () => {
    expect(Object.keys(replacers)).toEqual([
      "lineTrimmed",
      "blockAnchor",
      "whitespaceNormalized",
      "indentationFlexible",
      "escapeNormalized",
      "trimmedBoundary",
      "contextAware",
    ])
    expect(Replacers.ordered).toEqual(Object.values(replacers))
  })

  it("line-trimmed yields the exact blocks whose lines are equal after trimming", () => {
    expect(run(replacers.lineTrimmed, "  foo()\n  bar()\nbaz", "foo()\nbar()\n")).toEqual(["  foo()\n  bar()"])
    expect(run(replacers.lineTrimmed, "a\n\tb\na\n b\n", "a\nb")).toEqual(["a\n\tb", "a\n b"])
    expect(run(replacers.lineTrimmed, "a\nb", "a\nc")).toEqual([])
  })

  it("block-anchor yields a single anchored candidate unconditionally", () => {
    expect(run(replacers.blockAnchor, "start\n  x = 1\nend\n", "start\n  x = 2\nend")).toEqual(["start\n  x = 1\nend"])
    // Completely different middle lines, still one candidate: yielded (the V1 single-candidate threshold is 0).
    expect(run(replacers.blockAnchor, "start\nqqqqqq\nend", "start\nzzzzzz\nend")).toEqual(["start\nqqqqqq\nend"])
    // The last anchor must be at least two lines below the first, and only the first such line counts.
    expect(run(replacers.blockAnchor, "a\nz\nq\nz\nz", "a\nm\nz")).toEqual(["a\nz\nq\nz"])
  })

  it("block-anchor needs three find lines, counted before the trailing empty line is dropped", () => {
    expect(run(replacers.blockAnchor, "a\nx\nb", "a\nb")).toEqual([])
    expect(run(replacers.blockAnchor, "a\nx\nb", "a\nb\n")).toEqual(["a\nx\nb"])
    expect(run(replacers.blockAnchor, "a\nx\nb\nc", "a\nc\n")).toEqual(["a\nx\nb\nc"])
  })

  it("block-anchor picks the most similar of several candidates only at a similarity of at least 0.3", () => {
    const content = "start\nalpha\nend\nstart\nbeta\nend"
    expect(run(replacers.blockAnchor, content, "start\nbetx\nend")).toEqual(["start\nbeta\nend"])
    expect(run(replacers.blockAnchor, content, "start\nalphx\nend")).toEqual(["start\nalpha\nend"])
    // Nothing alike: the best similarity is 0 < 0.3.
    expect(run(replacers.blockAnchor, content, "start\nzzzzzz\nend")).toEqual([])
    // Ties keep the first candidate.
    expect(run(replacers.blockAnchor, "start\nab\nend\nstart\nba\nend", "start\nxx\nend")).toEqual([])
    expect(run(replacers.blockAnchor, "s\nabc\ne\ns\nabd\ne", "s\nab\ne")).toEqual(["s\nabc\ne"])
  })

  it("block-anchor similarity skips pairs of empty lines and treats a non-positive divisor as similar", () => {
    // An empty line against a non-empty one scores 0; the identical first block scores 1.
    expect(run(replacers.blockAnchor, "s\nx\ne\ns\n\ne", "s\nx\ne")).toEqual(["s\nx\ne"])
    // A pair of empty lines adds nothing (0 / 1 < 0.3).
    expect(run(replacers.blockAnchor, "s\n\ne\ns\n\ne", "s\n\ne")).toEqual([])
    // Two find lines after the drop: the divisor is 0, so each candidate scores 1 and the first wins.
    expect(run(replacers.blockAnchor, "s\n1\ne\ns\n2\ne", "s\ne\n")).toEqual(["s\n1\ne"])
    expect(Replacers.levenshtein("kitten", "sitting")).toBe(3)
    expect(Replacers.levenshtein("", "abc")).toBe(3)
  })

  it("whitespace-normalised yields the whole line, the regex-matched substring, or a normalised-equal window", () => {
    expect(run(replacers.whitespaceNormalized, "x\na = 1\ny", "a  =   1")).toEqual(["a = 1"])
    expect(run(replacers.whitespaceNormalized, "let a =\t1;", "a  = 1")).toEqual(["a =\t1"])
    expect(run(replacers.whitespaceNormalized, "foo(\na, b)\n", "foo(\n  a,   b)")).toEqual(["foo(\na, b)"])
    expect(run(replacers.whitespaceNormalized, "a = 2", "a = 1")).toEqual([])
  })

  it("indentation-flexible yields windows that are equal after dedent", () => {
    const content = "    if (x) {\n      y()\n    }\n"
    expect(run(replacers.indentationFlexible, content, "if (x) {\n  y()\n}")).toEqual([
      "    if (x) {\n      y()\n    }",
    ])
    expect(run(replacers.indentationFlexible, content, "if (x) {\ny()\n}")).toEqual([])
    // Blank lines stay as they are.
    expect(run(replacers.indentationFlexible, "  a\n\n  b", "a\n\nb")).toEqual(["  a\n\n  b"])
  })

  it("escape-normalised yields the unescaped string and the escaped windows", () => {
    expect(run(replacers.escapeNormalized, 'say("hi")', 'say(\\"hi\\")')).toEqual(['say("hi")', 'say("hi")'])
    expect(run(replacers.escapeNormalized, "a\tb\nc", "a\\tb\\nc")).toEqual(["a\tb\nc", "a\tb\nc"])
    expect(run(replacers.escapeNormalized, 'x\nsay(\\"hi\\")\ny', 'say("hi")')).toEqual(['say(\\"hi\\")'])
    expect(run(replacers.escapeNormalized, "cost $5 \\ `t` 'q'", "cost \\$5 \\\\ \\`t\\` \\'q\\'")).toEqual([
      "cost $5 \\ `t` 'q'",
      "cost $5 \\ `t` 'q'",
    ])
    // A backslash before a real newline becomes that newline.
    expect(run(replacers.escapeNormalized, "a\nb", "a\\\nb")).toEqual(["a\nb", "a\nb"])
  })

  it("trimmed-boundary yields nothing for a trimmed find, else the trimmed string and trimmed-equal windows", () => {
    expect(run(replacers.trimmedBoundary, "foo bar", "foo")).toEqual([])
    expect(run(replacers.trimmedBoundary, "foo\n  bar\nbaz\n", "\nfoo\n  bar\n")).toEqual(["foo\n  bar"])
    expect(run(replacers.trimmedBoundary, "  x  \ny", " x ")).toEqual(["x", "  x  "])
  })

  it("context-aware yields same-length anchored blocks with at least half of the non-empty middle lines equal", () => {
    const content = "fn a() {\n  one\n  two\n}\n"
    expect(run(replacers.contextAware, content, "fn a() {\n  one\n  three\n}")).toEqual(["fn a() {\n  one\n  two\n}"])
    expect(run(replacers.contextAware, content, "fn a() {\n  x\n  y\n}")).toEqual([])
    // Different length: nothing, and the search for this first line stops at the first closing anchor.
    expect(run(replacers.contextAware, content, "fn a() {\n  one\n}")).toEqual([])
    // Only empty middle lines: yielded.
    expect(run(replacers.contextAware, "a\n\nb", "a\n\nb")).toEqual(["a\n\nb"])
    expect(run(replacers.contextAware, "a\nb", "a\nb")).toEqual([])
  })

  describe("replace", () => {
    it("uses exact matching first with JavaScript replacement patterns", () => {
      expect(Replacers.replace("a b c", "b", "[$&]")).toEqual({
        _tag: "Replaced",
        text: "a [b] c",
        replacements: 1,
        fuzzy: false,
      })
      expect(Replacers.replace("x x x", "x", "y", true)).toEqual({
        _tag: "Replaced",
        text: "y y y",
        replacements: 3,
        fuzzy: false,
      })
      expect(Replacers.replace("x x", "x", "y")).toEqual({ _tag: "MultipleExact" })
      // Non-overlapping count: "aa" occurs twice in "aaaa", not three times.
      expect(Replacers.countOccurrences("aaaa", "aa")).toBe(2)
    })

    it("inserts a single fuzzy replacement literally", () => {
      expect(Replacers.replace("  foo()\n  bar()\n", "foo()\nbar()", "[$&]")).toEqual({
        _tag: "Replaced",
        text: "[$&]\n",
        replacements: 1,
        fuzzy: true,
      })
    })

    it("refuses ambiguous fuzzy candidates and reports not found", () => {
      expect(Replacers.replace("\ta\n\ta\n", "a ", "b")).toEqual({ _tag: "Ambiguous" })
      expect(Replacers.replace("abc", "xyz", "b")).toEqual({ _tag: "NotFound" })
    })

    it("with replaceAll replaces every occurrence of the first fuzzy candidate found", () => {
      expect(Replacers.replace("\ta\n\ta\n", "a ", "b", true)).toEqual({
        _tag: "Replaced",
        text: "b\nb\n",
        replacements: 2,
        fuzzy: true,
      })
    })

    const text = FastCheck.stringOf(FastCheck.constantFrom("a", "b", " ", "\t", "\n", "\\", "n", "$", "&"), {
      maxLength: 40,
    })

    it("substring replacers yield only substrings of the content", () => {
      FastCheck.assert(
        FastCheck.property(text, text, (content, find) => {
          for (const replacer of [
            replacers.lineTrimmed,
            replacers.blockAnchor,
            replacers.whitespaceNormalized,
            replacers.indentationFlexible,
            replacers.contextAware,
          ]) {
            for (const candidate of replacer(content, find)) expect(content.includes(candidate)).toBe(true)
          }
        }),
        { numRuns: 500 },
      )
    })

    it("a unique exact occurrence is replaced exactly as String.prototype.replace does", () => {
      FastCheck.assert(
        FastCheck.property(
          text,
          text.filter((s) => s.length > 0),
          text,
          (content, find, replacement) => {
            const outcome = Replacers.replace(content, find, replacement)
            if (Replacers.countOccurrences(content, find) === 1) {
              expect(outcome).toEqual({
                _tag: "Replaced",
                text: content.replace(find, replacement),
                replacements: 1,
                fuzzy: false,
              })
            } else if (outcome._tag === "Replaced" && outcome.fuzzy) {
              // A fuzzy single replacement removes exactly one candidate and inserts the replacement literally.
              expect(outcome.replacements).toBe(1)
              expect(outcome.text.includes(replacement)).toBe(true)
            }
          },
        ),
        { numRuns: 500 },
      )
    })
  })
})
