import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { PermissionV2, Wildcard } from "../src/index.js"

const posix = Wildcard.make({ caseInsensitive: false })
const win32 = Wildcard.make({ caseInsensitive: true })

/**
 * Test-only copy of the reference's regex construction: backslashes become `/` on both sides, regex
 * metacharacters are escaped, `*` → `.*`, `?` → `.`, a trailing ` .*` becomes optional, anchored, dot-all, and
 * case-insensitive only on win32.
 */
const reference = (input: string, pattern: string, caseInsensitive: boolean): boolean => {
  const subject = input.replace(/\\/g, "/")
  let source = pattern
    .replace(/\\/g, "/")
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
  if (source.endsWith(" .*")) source = source.slice(0, -3) + "( .*)?"
  return new RegExp(`^${source}$`, caseInsensitive ? "si" : "s").test(subject)
}

describe("Wildcard: the documented examples", () => {
  const rows: ReadonlyArray<readonly [input: string, pattern: string, expected: boolean]> = [
    ["git status", "git *", true],
    ["git", "git *", true],
    ["git commit -m x", "git *", true],
    ["gitx", "git *", false],
    ["lstmeval", "ls *", false],
    ["lstmeval", "ls*", true],
    ["ls", "ls*", true],
    ["ls", "ls *", true],
    ["ls -la", "ls *", true],
    ["file1.txt", "file?.txt", true],
    ["file12.txt", "file?.txt", false],
    ["foo+bar", "foo+bar", true],
    ["src/a/b.ts", "src/*", true],
    [".env", "*.env", true],
    ["config/.env", "*.env", true],
    ["a/b/.env", "*.env", true],
    [".env", "**/.env*", false],
    ["C:\\Windows\\System32\\x", "C:/Windows/System32/*", true],
    ["/users/test/file", "/Users/test/*", false],
    ["echo a\nrm -rf /", "echo *", true],
    ["git status; rm -rf x", "git *", true],
  ]
  for (const [input, pattern, expected] of rows) {
    it(`${JSON.stringify(input)} ~ ${JSON.stringify(pattern)} is ${expected} (POSIX)`, () => {
      expect(posix.match(input, pattern)).toBe(expected)
      expect(reference(input, pattern, false)).toBe(expected)
    })
  }

  it("/users/test/file matches /Users/test/* on win32", () => {
    expect(win32.match("/users/test/file", "/Users/test/*")).toBe(true)
  })

  it("last match wins: x/.env.example is allowed by `read *.env.example allow` after `read *.env.* ask`", () => {
    const rules: PermissionV2.Ruleset = [
      { action: "read", resource: "*.env.*", effect: "ask" },
      { action: "read", resource: "*.env.example", effect: "allow" },
    ]
    expect(PermissionV2.evaluate("read", "x/.env.example", rules).effect).toBe("allow")
    expect(PermissionV2.evaluate("read", "x/.env.local", rules).effect).toBe("ask")
  })
})

describe("Wildcard: the reference's cases", () => {
  it("glob tokens: ? is one character and + is literal", () => {
    expect(posix.match("file1.txt", "file?.txt")).toBe(true)
    expect(posix.match("file12.txt", "file?.txt")).toBe(false)
    expect(posix.match("file.txt", "file?.txt")).toBe(false)
    expect(posix.match("foo+bar", "foo+bar")).toBe(true)
    expect(posix.match("foooobar", "foo+bar")).toBe(false)
    expect(posix.match("a/b", "a?b")).toBe(true)
    expect(posix.match("a\nb", "a?b")).toBe(true)
  })

  it("trailing space + wildcard is optional", () => {
    expect(posix.match("ls", "ls *")).toBe(true)
    expect(posix.match("ls -la", "ls *")).toBe(true)
    expect(posix.match("lstmeval", "ls *")).toBe(false)
    expect(posix.match("ls ", "ls *")).toBe(true)
    expect(posix.match("ls", "ls*")).toBe(true)
    expect(posix.match("lstmeval", "ls*")).toBe(true)
  })

  it("slash normalisation: backslashes on either side are read as /", () => {
    expect(posix.match("C:\\Windows\\System32\\x", "C:/Windows/System32/*")).toBe(true)
    expect(posix.match("C:/Windows/System32/x", "C:\\Windows\\System32\\*")).toBe(true)
    expect(posix.match("a/b", "a\\b")).toBe(true)
    // a backslash never escapes a glob character
    expect(posix.match("a/x", "a\\*")).toBe(true)
    expect(posix.match("a*", "a\\*")).toBe(false)
  })

  it("case sensitivity: only on win32", () => {
    expect(posix.match("README.md", "readme.md")).toBe(false)
    expect(win32.match("README.md", "readme.md")).toBe(true)
    expect(win32.match("Straße", "STRASSE")).toBe(false)
    expect(win32.match("ÉCOLE", "école")).toBe(true)
    // non-ASCII units never fold into ASCII (ECMAScript non-Unicode `i`)
    expect(win32.match("\u017f", "s")).toBe(false)
    expect(win32.match("\u0131", "I")).toBe(false)
    expect(win32.match("\u212a", "k")).toBe(false)
    expect(Wildcard.match("x", "x")).toBe(true)
  })

  it("anchoring and emptiness", () => {
    expect(posix.match("", "")).toBe(true)
    expect(posix.match("a", "")).toBe(false)
    expect(posix.match("", "*")).toBe(true)
    expect(posix.match("xabcx", "abc")).toBe(false)
    expect(posix.match("abc", "**")).toBe(true)
  })
})

// Alphabet for generated patterns and inputs: glob characters, every regex metacharacter, backslash, slash, space,
// newline, letters in both cases (with tricky case pairs), non-ASCII letters, an astral character and a lone
// surrogate.
const ALPHABET = [
  "a",
  "b",
  "A",
  "B",
  "s",
  "S",
  "k",
  "K",
  "i",
  "I",
  "é",
  "É",
  "ß",
  "\u017f",
  "\u0131",
  "\u212a",
  "😀",
  "\ud83d",
  "*",
  "?",
  ".",
  "+",
  "^",
  "$",
  "{",
  "}",
  "(",
  ")",
  "|",
  "[",
  "]",
  "\\",
  "/",
  " ",
  "\n",
  "-",
]
const INPUT_ALPHABET = ALPHABET.filter((c) => c !== "*" && c !== "?")

const char = FastCheck.constantFrom(...ALPHABET)
const inputChar = FastCheck.constantFrom(...INPUT_ALPHABET)
const text = (unit: FastCheck.Arbitrary<string>, maxLength: number) =>
  FastCheck.array(unit, { maxLength }).map((chars) => chars.join(""))

const pattern = FastCheck.tuple(text(char, 10), FastCheck.boolean()).map(([body, trailing]) =>
  trailing ? body + " *" : body,
)

/** An input built from a pattern (stars expanded, `?` replaced), so a good share of cases actually match. */
const instance = (p: string) =>
  FastCheck.array(FastCheck.tuple(text(inputChar, 4), inputChar, FastCheck.boolean()), {
    minLength: p.length,
    maxLength: p.length,
  }).map((fills) => {
    let out = ""
    for (let i = 0; i < p.length; i++) {
      const c = p[i]!
      const [run, unit, flip] = fills[i]!
      if (c === "*") out += run
      else if (c === "?") out += unit
      else out += flip ? (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) : c
    }
    return out
  })

const mutate = (input: string) =>
  FastCheck.oneof(
    FastCheck.constant(input),
    FastCheck.constant(input.slice(0, -1)),
    FastCheck.constant(input.replace(/ $/, "")),
    inputChar.map((c) => input + c),
    inputChar.map((c) => c + input),
  )

const pair = pattern.chain((p) =>
  FastCheck.oneof(
    text(inputChar, 14).map((input) => [p, input] as const),
    instance(p)
      .chain(mutate)
      .map((input) => [p, input] as const),
  ),
)

describe("Wildcard: differential against the reference regex", () => {
  for (const [name, matcher, caseInsensitive] of [
    ["POSIX", posix, false],
    ["win32", win32, true],
  ] as const) {
    it(`${name}: agrees with the regex construction on generated patterns and inputs`, () => {
      let matched = 0
      FastCheck.assert(
        FastCheck.property(pair, ([p, input]) => {
          const expected = reference(input, p, caseInsensitive)
          if (expected) matched++
          expect(matcher.match(input, p)).toBe(expected)
        }),
        { numRuns: 3000 },
      )
      // the generator must exercise both outcomes, or the comparison says little
      expect(matched).toBeGreaterThan(300)
      expect(matched).toBeLessThan(2700)
    })
  }

  it("the platform matcher is the POSIX one here (win32 only folds case)", () => {
    FastCheck.assert(
      FastCheck.property(pair, ([p, input]) => {
        expect(Wildcard.match(input, p)).toBe(reference(input, p, process.platform === "win32"))
      }),
      { numRuns: 1000 },
    )
  })
})

describe("Wildcard: cache and complexity", () => {
  it("cache transparency: results are the same on repeat, after eviction and in a fresh matcher", () => {
    const cases = FastCheck.sample(pair, { numRuns: Wildcard.CACHE_SIZE * 3, seed: 7 })
    const matcher = Wildcard.make({ caseInsensitive: false })
    const first = cases.map(([p, input]) => matcher.match(input, p))
    const again = cases.map(([p, input]) => matcher.match(input, p))
    const fresh = cases.map(([p, input]) => Wildcard.make({ caseInsensitive: false }).match(input, p))
    expect(again).toEqual(first)
    expect(fresh).toEqual(first)
    expect(first).toEqual(cases.map(([p, input]) => reference(input, p, false)))
    // one pattern against different inputs keeps answering each input on its own
    expect(matcher.match("git status", "git *")).toBe(true)
    expect(matcher.match("gitx", "git *")).toBe(false)
    expect(matcher.match("git status", "git *")).toBe(true)
  })

  it("long inputs (rewritten unit by unit) are prepared exactly as replaceAll would, lone surrogates included", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ unit: FastCheck.constantFrom("a", "\\", "/", "é", "\u2603", "\ud800", "*"), maxLength: 16 }),
        (piece) => {
          const input = piece.repeat(Math.ceil(5000 / Math.max(1, piece.length)))
          expect(posix.normalize(input)).toBe(input.replaceAll("\\", "/"))
          expect(posix.test(posix.normalize(input), posix.compile("*a\\?*"))).toBe(reference(input, "*a\\?*", false))
        },
      ),
      { numRuns: 200 },
    )
  })

  it("30 stars against a 10 000-character non-matching string returns false", () => {
    const long = "a".repeat(10_000)
    expect(posix.match(long, "*a".repeat(30) + "b")).toBe(false)
    expect(posix.match(long, "a*".repeat(30) + "?b")).toBe(false)
    expect(posix.match(long, "*?a".repeat(30) + "*b*")).toBe(false)
    expect(win32.match(long, "*A".repeat(30) + "b")).toBe(false)
    expect(posix.match(long, "*a".repeat(30))).toBe(true)
  })
})

/** The reference's regex for a pattern built from literal pieces joined by wildcards (pieces regex-escaped). */
const referenceComposed = (input: string, pieces: ReadonlyArray<string>, joiner: "*" | "?"): boolean => {
  const escape = (text: string) => text.replace(/\\/g, "/").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const source = pieces.map(escape).join(joiner === "*" ? ".*" : ".")
  return new RegExp(`^${source}$`, "s").test(input.replace(/\\/g, "/"))
}

describe("Wildcard: literal escapes (saved approvals are exactly as broad as shown)", () => {
  const literalChar = FastCheck.constantFrom(...ALPHABET, Wildcard.ESCAPE, " ")
  const literalText = text(literalChar, 12)

  it("`du -sh *` saved literally does not match a different command", () => {
    const saved = Wildcard.literal("du -sh *")
    expect(posix.match("du -sh *", saved)).toBe(true)
    expect(posix.match("du -sh ; rm -f ../x", saved)).toBe(false)
    expect(posix.match("du -sh", saved)).toBe(false)
    expect(posix.match("du -sh x", saved)).toBe(false)
    // the unescaped pattern is the reference's wildcard and still means what it always meant
    expect(posix.match("du -sh ; rm -f ../x", "du -sh *")).toBe(true)
  })

  it("`?` and the escape character itself are literal after escaping", () => {
    expect(posix.match("a?b", Wildcard.literal("a?b"))).toBe(true)
    expect(posix.match("axb", Wildcard.literal("a?b"))).toBe(false)
    expect(posix.match("a\u0000b", Wildcard.literal("a\u0000b"))).toBe(true)
    expect(posix.match("ab", Wildcard.literal("a\u0000b"))).toBe(false)
    // a lone trailing escape stands for itself
    expect(posix.match("a\u0000", "a\u0000")).toBe(true)
  })

  it("a literal prefix composes with a wildcard suffix: `git commit *` keeps its optional trailing arguments", () => {
    const prefix = Wildcard.literal("git commit") + " *"
    expect(posix.match("git commit", prefix)).toBe(true)
    expect(posix.match("git commit -m x", prefix)).toBe(true)
    expect(posix.match("git commitx", prefix)).toBe(false)
    const starry = Wildcard.literal("ls a*") + " *"
    expect(posix.match("ls a* -l", starry)).toBe(true)
    expect(posix.match("ls ab -l", starry)).toBe(false)
    const directory = Wildcard.literal("/tmp/we?rd*/") + "*"
    expect(posix.match("/tmp/we?rd*/file", directory)).toBe(true)
    expect(posix.match("/tmp/weird-other/file", directory)).toBe(false)
  })

  for (const [name, matcher, caseInsensitive] of [
    ["POSIX", posix, false],
    ["win32", win32, true],
  ] as const) {
    it(`${name}: literal(t) matches t and nothing else (same backslash and case rules)`, () => {
      const normal = (value: string) => {
        const slashed = value.replace(/\\/g, "/")
        return caseInsensitive ? slashed.toUpperCase() : slashed
      }
      FastCheck.assert(
        FastCheck.property(literalText, literalText, (t, other) => {
          expect(matcher.match(t, Wildcard.literal(t))).toBe(true)
          if (normal(other) !== normal(t) && !caseInsensitive) {
            expect(matcher.match(other, Wildcard.literal(t))).toBe(false)
          }
        }),
        { numRuns: 3000 },
      )
    })
  }

  it("escaped pieces joined by `*` or `?` agree with the reference regex of the same pieces", () => {
    const pieces = FastCheck.array(literalText, { minLength: 1, maxLength: 4 })
    FastCheck.assert(
      FastCheck.property(
        pieces,
        FastCheck.constantFrom("*" as const, "?" as const),
        literalText,
        (parts, joiner, noise) => {
          const p = parts.map(Wildcard.literal).join(joiner)
          for (const input of [parts.join(noise.slice(0, joiner === "?" ? 1 : noise.length)), noise, parts.join("")]) {
            // the optional trailing " *" is a property of the written pattern; keep it out of this comparison
            if (p.endsWith(" *")) continue
            expect(posix.match(input, p)).toBe(referenceComposed(input, parts, joiner))
          }
        },
      ),
      { numRuns: 2000 },
    )
  })

  it("isLiteral, unescape and display", () => {
    expect(Wildcard.isLiteral(Wildcard.literal("du -sh *"))).toBe(true)
    expect(Wildcard.isLiteral("du -sh *")).toBe(false)
    expect(Wildcard.unescape(Wildcard.literal("a*b?c\u0000"))).toBe("a*b?c\u0000")
    expect(Wildcard.display(Wildcard.literal("du -sh *"))).toBe("du -sh *")
    expect(Wildcard.display(Wildcard.literal("ls a*") + " *")).toBe("ls a[*] *")
    expect(Wildcard.display("src/*")).toBe("src/*")
    FastCheck.assert(
      FastCheck.property(literalText, (t) => {
        expect(Wildcard.isLiteral(Wildcard.literal(t))).toBe(true)
        expect(Wildcard.unescape(Wildcard.literal(t))).toBe(t)
      }),
    )
  })

  it("patterns without the escape character are unchanged: the differential test above never generates it", () => {
    expect(ALPHABET).not.toContain(Wildcard.ESCAPE)
  })
})

/**
 * A plain dynamic-programming matcher with the reference semantics (backslashes read as `/`, `*` any run, `?` one
 * unit, optional trailing `" *"`, anchored), in time proportional to input × pattern: the oracle for inputs too long
 * for the reference regex, whose backtracking grows with the power of the number of stars. Checked against the
 * reference regex below.
 */
const dynamic = (input: string, pattern: string, caseInsensitive: boolean): boolean => {
  const canonical = (text: string) => {
    const slashed = text.replace(/\\/g, "/")
    // ECMAScript's non-Unicode case canonicalisation, unit by unit, as the `i` flag applies it.
    if (!caseInsensitive) return slashed
    let out = ""
    for (const unit of slashed.split("")) {
      const upper = unit.toUpperCase()
      out += upper.length === 1 && !(unit.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128) ? upper : unit
    }
    return out
  }
  const subject = canonical(input)
  const whole = (tokens: string) => {
    let previous = new Uint8Array(subject.length + 1)
    previous[0] = 1
    for (const token of tokens.split("")) {
      const next = new Uint8Array(subject.length + 1)
      if (token === "*") {
        let reachable = 0
        for (let j = 0; j <= subject.length; j++) next[j] = reachable |= previous[j]!
      } else {
        for (let j = 1; j <= subject.length; j++)
          next[j] = previous[j - 1]! & (token === "?" || subject[j - 1] === token ? 1 : 0)
      }
      previous = next
    }
    return previous[subject.length] === 1
  }
  const p = canonical(pattern)
  return whole(p) || (p.endsWith(" *") && whole(p.slice(0, -2)))
}

describe("Wildcard: adversarial inputs (long texts dense with candidates)", () => {
  it("the dynamic-programming oracle agrees with the reference regex on generated cases", () => {
    FastCheck.assert(
      FastCheck.property(pair, FastCheck.boolean(), ([p, input], caseInsensitive) => {
        expect(dynamic(input, p, caseInsensitive)).toBe(reference(input, p, caseInsensitive))
      }),
      { numRuns: 2000 },
    )
  })

  it("`*x?z*` against x at every third unit: no match, a match at the very end, and one just past the end", () => {
    const body = "xab".repeat(20_000)
    for (const [input, pattern, expected] of [
      [body, "*x?z*", false],
      [body + "xaz", "*x?z*", true],
      ["xza".repeat(20_000), "*x?z*", false],
      ["xza".repeat(20_000) + "xzz", "*x?z*", true],
      [body + "xaz", "*x?z", true],
      [body + "xaz", "*x?z?", false],
      [body + "xazq", "*x?z*q", true],
      [body + "xaq", "*x?z*q", false],
      [body + "xaz" + body + "yaw", "*x?z*y?w*", true],
      [body + "xaz", "*x?z*?", false],
      [body + "xazq", "*x?z*?", true],
      ["x\nb".repeat(20_000) + "x\nz", "*x?z*", true],
      ["x\u2028b".repeat(20_000) + "x\u2028z", "*x?z*", true],
      ...Array.from({ length: 12 }, (_, k) => ["xab".repeat(10 + k) + "xxaz", "*x?z*", true] as const),
      ...Array.from({ length: 12 }, (_, k) => ["xab".repeat(10 + k) + "xxab", "*x?z*", false] as const),
      [body + "xazyaw", "*x?z*y?w*", true],
      [body + "xazyaw", "*x?z*y?w", true],
      [body + "yaw" + body + "xaz", "*x?z*y?w*", false],
      ["\\\\x".repeat(20_000) + "x/z", "*x?z*", true],
      ["\\\\x".repeat(20_000) + "x\\z", "*x\\z*", true],
      ["éüa".repeat(20_000), "*é?ü*", false],
      ["éüa".repeat(20_000) + "éüü", "*é?ü*", true],
    ] as const) {
      expect(posix.match(input, pattern), `${pattern} on ${input.length} units`).toBe(expected)
      expect(dynamic(input, pattern, false)).toBe(expected)
    }
  })

  it("long inputs on win32 are folded exactly as the `i` flag folds them, ASCII and not", () => {
    for (const input of ["xAb".repeat(5000) + "XaZ", "éÉß\u017f".repeat(3000) + "xaz", "ab\ud800".repeat(3000)]) {
      for (const pattern of ["*x?z*", "*É?ß*", "*A?\ud800*", "*ß\u017f*"]) {
        expect(win32.match(input, pattern), `${pattern}`).toBe(dynamic(input, pattern, true))
      }
      expect(win32.normalize(input)).toBe(
        input
          .split("")
          .map((unit) => {
            const upper = unit.toUpperCase()
            return upper.length === 1 && !(unit.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128) ? upper : unit
          })
          .join(""),
      )
    }
  })

  // `<edge>*<holed>*…*<holed>*<edge>`: one to three floating segments with `?` holes between anchored ends. Before each
  // floating segment the input repeats near misses of it (its holes filled, one literal unit changed) up to a few
  // hundred units, so its literal run is found again and again and the search gives up on `indexOf` and scans; the
  // segment itself follows, intact or with one literal unit changed too.
  const units = ["a", "b", "é", "/", "\\", "\n"]
  const unit = FastCheck.constantFrom(...units)
  const holed = FastCheck.array(FastCheck.constantFrom("a", "b", "é", "/", "?"), { minLength: 2, maxLength: 8 })
    .filter((tokens) => tokens.includes("?") && tokens.some((token) => token !== "?"))
    .map((tokens) => tokens.join(""))
  const edge = FastCheck.constantFrom("", "", "a", "?b", "é?", "*")
  /** `segment` with its holes filled from `fill`, and the literal unit at `broken` (mod the literals) changed. */
  const instanceOf = (segment: string, fill: ReadonlyArray<string>, broken: number | undefined) => {
    const literals = [...segment].flatMap((c, i) => (c === "?" ? [] : [i]))
    const at = broken === undefined ? -1 : literals[broken % literals.length]!
    return [...segment]
      .map((c, i) => {
        if (c === "?") return fill[i % fill.length]!
        if (i !== at) return c
        return units.find((other) => other !== c && !(c === "/" && other === "\\"))!
      })
      .join("")
  }
  const dense = FastCheck.tuple(
    edge,
    FastCheck.array(
      FastCheck.record({
        segment: holed,
        fill: FastCheck.array(unit, { minLength: 1, maxLength: 3 }),
        decoys: FastCheck.nat({ max: 80 }),
        broken: FastCheck.oneof(FastCheck.constant(undefined), FastCheck.nat()),
        which: FastCheck.nat(),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    edge,
  ).map(([head, middle, tail]) => {
    const pattern = `${head}*${middle.map((part) => part.segment).join("*")}*${tail}`
    const fixed = (edge: string) => edge.replace("*", "ab").replace("?", "é")
    let input = fixed(head)
    for (const part of middle) {
      input += instanceOf(part.segment, part.fill, part.which).repeat(part.decoys)
      input += instanceOf(part.segment, part.fill, part.broken)
    }
    return [pattern, input + fixed(tail)] as const
  })

  for (const [name, matcher, caseInsensitive] of [
    ["POSIX", posix, false],
    ["win32", win32, true],
  ] as const) {
    it(`${name}: agrees with the oracle on long, candidate-dense inputs`, () => {
      let matched = 0
      FastCheck.assert(
        FastCheck.property(dense, ([p, input]) => {
          const expected = dynamic(input, p, caseInsensitive)
          if (expected) matched++
          expect(matcher.match(input, p)).toBe(expected)
        }),
        { numRuns: 600 },
      )
      expect(matched).toBeGreaterThan(60)
      expect(matched).toBeLessThan(540)
    })
  }
})
