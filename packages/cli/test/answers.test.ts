import { describe, expect, it } from "vitest"
import { parsePermission, parseQuestion } from "../src/answers.js"
import { clip, render } from "../src/table.js"

describe("stdin answers", () => {
  it("parses permission replies, with an optional rejection message", () => {
    expect(parsePermission("once")).toEqual({ reply: "once" })
    expect(parsePermission(" O ")).toEqual({ reply: "once" })
    expect(parsePermission("always")).toEqual({ reply: "always" })
    expect(parsePermission("a")).toEqual({ reply: "always" })
    expect(parsePermission("reject")).toEqual({ reply: "reject" })
    expect(parsePermission("reject   ")).toEqual({ reply: "reject" })
    expect(parsePermission("reject use the public file")).toEqual({ reply: "reject", message: "use the public file" })
    expect(parsePermission("r: not now")).toEqual({ reply: "reject", message: "not now" })
    expect(parsePermission("yes")).toBeUndefined()
    expect(parsePermission("oncemore")).toBeUndefined()
    expect(parsePermission("")).toBeUndefined()
  })

  it("parses question answers by number, label, free text or dismissal", () => {
    const question = {
      question: "Which?",
      header: "Pick",
      options: [
        { label: "Red", description: "r" },
        { label: "Blue", description: "b" },
      ],
    }
    expect(parseQuestion(question, "2")).toEqual(["Blue"])
    expect(parseQuestion(question, "red")).toEqual(["Red"])
    expect(parseQuestion(question, "3")).toBeUndefined()
    expect(parseQuestion(question, "1,2")).toBeUndefined()
    expect(parseQuestion({ ...question, multiple: true }, "1, 2")).toEqual(["Red", "Blue"])
    expect(parseQuestion(question, "green, please")).toEqual(["green, please"])
    expect(parseQuestion({ ...question, custom: false }, "green")).toBeUndefined()
    expect(parseQuestion(question, "dismiss")).toBe("dismiss")
    expect(parseQuestion(question, "  ")).toBeUndefined()
  })
})

describe("tables", () => {
  it("aligns columns to the widest cell and clips long cells", () => {
    expect(
      render(
        ["id", "name"],
        [
          ["1", "alpha"],
          ["22", "b"],
        ],
        "  ",
      ),
    ).toBe(["  id  name", "  --  -----", "  1   alpha", "  22  b"].join("\n"))
    expect(clip("a\nb   c", 10)).toBe("a b c")
    expect(clip("abcdefghij", 5)).toBe("abcd…")
  })
})
