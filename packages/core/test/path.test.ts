import * as nodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Path from "../src/values/path.js"

const segment = FastCheck.stringMatching(/^[a-z.]{1,4}$/).filter((s) => s !== "." && s !== "..")
const absolute = FastCheck.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join("/")}`)

describe("Path.isWithin", () => {
  it("holds for the directory itself and what is below it, not for siblings, parents or `..`", () => {
    expect(Path.isWithin("/a/b", "/a/b")).toBe(true)
    expect(Path.isWithin("/a/b", "/a/b/c")).toBe(true)
    expect(Path.isWithin("/a/b", "/a/b/..cache")).toBe(true)
    expect(Path.isWithin("/a/b", "/a/bc")).toBe(false)
    expect(Path.isWithin("/a/b", "/a")).toBe(false)
    expect(Path.isWithin("/a/b", "/a/b/../c")).toBe(false)
    expect(Path.isWithin("/", "/anything")).toBe(true)
  })

  it("agrees with a prefix test on normalized absolute paths", () => {
    FastCheck.assert(
      FastCheck.property(absolute, absolute, (parent, child) => {
        const p = nodePath.resolve(parent)
        const c = nodePath.resolve(child)
        const expected = c === p || c.startsWith(p === "/" ? "/" : `${p}/`)
        expect(Path.isWithin(parent, child)).toBe(expected)
      }),
    )
  })

  it("a child joined below the parent is always within it", () => {
    FastCheck.assert(
      FastCheck.property(absolute, FastCheck.array(segment, { maxLength: 3 }), (parent, below) => {
        expect(Path.isWithin(parent, nodePath.join(parent, ...below))).toBe(true)
      }),
    )
  })
})

describe("Path.expandHome", () => {
  it("expands a leading ~ or $HOME only", () => {
    expect(Path.expandHome("~", "/home/u")).toBe("/home/u")
    expect(Path.expandHome("~/x/*", "/home/u")).toBe("/home/u/x/*")
    expect(Path.expandHome("$HOME", "/home/u")).toBe("/home/u")
    expect(Path.expandHome("$HOME/x", "/home/u")).toBe("/home/u/x")
    expect(Path.expandHome("$HOME\\x", "/home/u")).toBe("/home/u\\x")
    expect(Path.expandHome("~user/x", "/home/u")).toBe("~user/x")
    expect(Path.expandHome("/a/~/b", "/home/u")).toBe("/a/~/b")
    expect(Path.expandHome("$HOMEX", "/home/u")).toBe("$HOMEX")
  })

  it("uses the home it is given, never the process's", () => {
    expect(Path.expandHome("~/x", "/elsewhere")).toBe("/elsewhere/x")
  })

  it("knows which texts start with the home it expands", () => {
    expect(Path.startsWithHome("~")).toBe(true)
    expect(Path.startsWithHome("~/a")).toBe(true)
    expect(Path.startsWithHome("~a")).toBe(false)
    expect(Path.startsWithHome("a~")).toBe(false)
  })
})

describe("Path surrogates", () => {
  it("finds a lone surrogate and accepts pairs", () => {
    expect(Path.hasLoneSurrogate("a\uD800b")).toBe(true)
    expect(Path.hasLoneSurrogate("a\uDC00")).toBe(true)
    expect(Path.hasLoneSurrogate("\uDC00\uD800")).toBe(true)
    expect(Path.hasLoneSurrogate("a\uD83D\uDE00b")).toBe(false)
    expect(Path.hasLoneSurrogate("plain")).toBe(false)
  })

  it("agrees with a UTF-8 round trip on every string", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.string({ unit: "binary" }), (text) => {
        const roundTrips = Buffer.from(text, "utf8").toString("utf8") === text
        expect(Path.hasLoneSurrogate(text)).toBe(!roundTrips)
      }),
    )
  })

  it("never lets a cut split a pair", () => {
    const text = "a\uD83D\uDE00b"
    expect(Path.splitsPair(text, 2)).toBe(true)
    expect(Path.splitsPair(text, 1)).toBe(false)
    expect(Path.splitsPair(text, 3)).toBe(false)
    expect(Path.isHighSurrogate(0xd83d)).toBe(true)
    expect(Path.isLowSurrogate(0xde00)).toBe(true)
    expect(Path.isLowSurrogate(0xd83d)).toBe(false)
  })
})
