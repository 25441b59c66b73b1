import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { Printable } from "../src/index.js"
import * as Hostile from "./support/hostile-text.js"

describe("Printable.show", () => {
  it("writes every C0/C1 control, DEL, bidi and invisible character as a visible escape", () => {
    for (const char of Hostile.ALL) {
      expect(Printable.show(`a${char}b`), `U+${char.codePointAt(0)!.toString(16)}`).toBe(`a${Hostile.escapeOf(char)}b`)
    }
    const shown = Printable.show(Hostile.EVERYTHING)
    expect(Hostile.rawFound(shown)).toEqual([])
    expect(Printable.parse(shown)).toBe(Hostile.EVERYTHING)
  })

  it("shows disguised commands as what they are", () => {
    for (const { raw, shown } of Hostile.DISGUISED) expect(Printable.show(raw)).toBe(shown)
  })

  it("leaves ordinary text, spaces, quotes and non-Latin letters alone", () => {
    for (const text of [
      "ls -la",
      "echo \"a b\" 'c'",
      "grep 'a\\|b' src",
      "C:\\Users\\me",
      "日本語 ünïcødé 🙂",
      "$(pwd)",
    ]) {
      expect(Printable.show(text)).toBe(text)
      expect(Printable.isPlain(text)).toBe(true)
    }
  })

  it("doubles a backslash only where it would read as an escape", () => {
    expect(Printable.show("\\x1b")).toBe("\\\\x1b")
    expect(Printable.show("\\u202e")).toBe("\\\\u202e")
    expect(Printable.show("a\\nb")).toBe("a\\\\nb")
    expect(Printable.show("\\\\")).toBe("\\\\\\")
    expect(Printable.show("\\\x1b")).toBe("\\\\\\x1b")
    expect(Printable.show("C:\\temp")).toBe("C:\\\\temp")
    expect(Printable.show("dir\\")).toBe("dir\\")
  })

  it("is unambiguous: parse(show(text)) is text for any string, and the display holds nothing unsafe", () => {
    const alphabet = FastCheck.constantFrom(..."\\nrtxu{}0a9f ", ...Hostile.ALL, "\ud800", "\udc00", "🙂")
    const text = FastCheck.oneof(
      FastCheck.string({ unit: "binary" }),
      FastCheck.array(alphabet).map((chars) => chars.join("")),
    )
    FastCheck.assert(
      FastCheck.property(text, (value) => {
        const shown = Printable.show(value)
        expect(Printable.parse(shown)).toBe(value)
        expect(Printable.UNSAFE.test(shown)).toBe(false)
        expect(Hostile.rawFound(shown)).toEqual([])
      }),
      { numRuns: 500 },
    )
  })
})

describe("Printable.quote and Printable.safe", () => {
  it("quote is JSON-style: quotes and backslashes escaped, unsafe characters as in show", () => {
    expect(Printable.quote('a "b" \\c')).toBe('"a \\"b\\" \\\\c"')
    expect(Printable.quote("x\u202ey\x1b")).toBe('"x\\u202ey\\x1b"')
    expect(Printable.quote(" trailing ")).toBe('" trailing "')
    for (const char of Hostile.ALL) expect(Hostile.rawFound(Printable.quote(char))).toEqual([])
  })

  it("safe keeps line breaks, tabs and backslashes and escapes everything else", () => {
    expect(Printable.safe("a\nb\tc\\x")).toBe("a\nb\tc\\x")
    expect(Printable.safe("ok\r\x1b[2Kfake")).toBe("ok\\r\\x1b[2Kfake")
    expect(Hostile.rawFound(Printable.safe(Hostile.EVERYTHING), { newlines: true, tabs: true })).toEqual([])
  })
})
