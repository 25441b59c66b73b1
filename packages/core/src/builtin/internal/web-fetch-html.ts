/**
 * HTML conversion of `webfetch`: text extraction (nesting-aware, outside active or embedded content) and Markdown
 * through Turndown. Long documents are parsed in chunks with yields to the event loop, and large ones converted in
 * a worker thread, so the call's timeout can stop a conversion at any point.
 *
 * @since 0.3.0
 */
import { Worker } from "node:worker_threads"
import * as Effect from "effect/Effect"
import { Parser } from "htmlparser2"
import type TurndownService from "turndown"
import * as CorePackage from "../../system/core-package.js"
import { ConversionError } from "./web-fetch-errors.js"

/**
 * The output formats (see `WebFetchTool.Format`).
 *
 * @since 0.3.0
 * @category models
 */
export type Format = "text" | "markdown" | "html"

/**
 * HTML up to this many UTF-16 units (and nested no deeper than `INLINE_MARKDOWN_DEPTH`) is converted to Markdown on
 * the calling thread; every other document goes to a worker thread, which the call's timeout terminates. Kept small:
 * Turndown's cost grows with depth as well as size (56 KB of nested `<b>` takes seconds), and a conversion on the
 * calling thread cannot be stopped by the timeout.
 *
 * @since 0.3.0
 * @category constants
 */
export const INLINE_MARKDOWN_LIMIT = 4 * 1024

/**
 * The deepest nesting converted on the calling thread (with `INLINE_MARKDOWN_LIMIT`); deeper documents go to the
 * worker.
 *
 * @since 0.4.0
 * @category constants
 */
export const INLINE_MARKDOWN_DEPTH = 32

/**
 * The deepest element nesting converted to Markdown. Turndown's DOM parser is quadratic in depth and its converter
 * overflows the stack at roughly 1400 levels, so deeper documents fail up front instead of blocking the event loop.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_HTML_DEPTH = 1024

const SKIPPED = new Set(["script", "style", "noscript", "iframe", "object", "embed"])

/** A parser whose handlers collect what `result` returns once the whole document has been written. */
interface Pass<A> {
  readonly parser: Parser
  readonly result: () => A
}

const textPass = (): Pass<string> => {
  let text = ""
  let depth = 0
  const parser = new Parser({
    onopentag: (tag) => {
      if (depth > 0 || SKIPPED.has(tag)) depth++
    },
    ontext: (chunk) => {
      if (depth === 0) text += chunk
    },
    onclosetag: () => {
      if (depth > 0) depth--
    },
  })
  return { parser, result: () => text.trim() }
}

const depthPass = (): Pass<number> => {
  let depth = 0
  let deepest = 0
  const parser = new Parser({
    onopentag: () => {
      depth++
      if (depth > deepest) deepest = depth
    },
    onclosetag: () => {
      if (depth > 0) depth--
    },
  })
  return { parser, result: () => deepest }
}

const runPass = <A>(pass: Pass<A>, html: string): A => {
  pass.parser.write(html)
  pass.parser.end()
  return pass.result()
}

/** The characters fed to a parser between two yields to the event loop. */
const PASS_CHUNK = 256 * 1024

/** Yields to the event loop (timers included), so a pending timeout can interrupt a long parse. */
const yieldToEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** `runPass` in chunks with a yield to the event loop between them: interruptible, and never blocks for long. */
const runPassChunked = <A>(pass: Pass<A>, html: string): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (let at = 0; at < html.length; at += PASS_CHUNK) {
      pass.parser.write(html.slice(at, at + PASS_CHUNK))
      if (at + PASS_CHUNK < html.length) yield* yieldToEventLoop
    }
    pass.parser.end()
    return pass.result()
  })

/**
 * The concatenated text nodes of `html` outside active or embedded content (nesting-aware), trimmed.
 *
 * @since 0.3.0
 * @category conversion
 */
export const extractText = (html: string): string => runPass(textPass(), html)

/** Turndown's options: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis. */
const TURNDOWN_OPTIONS = {
  headingStyle: "atx",
  hr: "---",
  bulletListMarker: "-",
  codeBlockStyle: "fenced",
  emDelimiter: "*",
} as const satisfies TurndownService.Options

/** Elements dropped with their content. */
const TURNDOWN_REMOVED = ["script", "style", "meta", "link"] as const

let turndown: TurndownService | undefined

const depthError = () => new ConversionError({ message: `HTML nesting exceeds ${MAX_HTML_DEPTH} levels` })

const turndownInline = (html: string): string => {
  if (turndown === undefined) {
    // Loaded on the first conversion (it brings a whole DOM implementation), not with the module.
    const Turndown = CorePackage.require("turndown") as typeof TurndownService
    turndown = new Turndown(TURNDOWN_OPTIONS)
    turndown.remove([...TURNDOWN_REMOVED])
  }
  return turndown.turndown(html)
}

/**
 * `html` as Markdown: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis; no script/style/meta/link.
 * Throws `ConversionError` on documents nested deeper than `MAX_HTML_DEPTH`.
 *
 * @since 0.3.0
 * @category conversion
 */
export const toMarkdown = (html: string): string => {
  if (runPass(depthPass(), html) > MAX_HTML_DEPTH) throw depthError()
  return turndownInline(html)
}

/** The worker's whole program: convert `workerData.html` with the same options and post the Markdown back. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const TurndownService = require(workerData.module)
const service = new TurndownService(workerData.options)
service.remove(workerData.removed)
parentPort.postMessage(service.turndown(workerData.html))
`

let turndownModule: string | undefined

const converterFailed = (cause: unknown) =>
  new ConversionError({
    message: cause instanceof Error ? cause.message : String(cause),
    cause,
  })

/** Converts `html` in a fresh worker thread; interruption (the timeout) terminates the worker. */
const turndownInWorker = (html: string): Effect.Effect<string, ConversionError> =>
  Effect.async<string, ConversionError>((resume) => {
    turndownModule ??= CorePackage.require.resolve("turndown")
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: turndownModule, options: TURNDOWN_OPTIONS, removed: TURNDOWN_REMOVED, html },
    })
    let settled = false
    const settle = (effect: Effect.Effect<string, ConversionError>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    worker.once("message", (markdown: string) => settle(Effect.succeed(markdown)))
    worker.once("error", (error) => settle(Effect.fail(converterFailed(error))))
    worker.once("exit", (code) =>
      settle(Effect.fail(new ConversionError({ message: `HTML conversion stopped (exit code ${code})` }))),
    )
    // Stopping starts at once; the call does not wait for the thread to wind down.
    return Effect.sync(() => void worker.terminate().catch(() => undefined))
  })

/** `toMarkdown` without blocking the event loop for long: chunked depth check, then inline or worker conversion. */
const toMarkdownBounded = (html: string): Effect.Effect<string, ConversionError> =>
  Effect.gen(function* () {
    const depth = yield* runPassChunked(depthPass(), html)
    if (depth > MAX_HTML_DEPTH) return yield* depthError()
    if (html.length <= INLINE_MARKDOWN_LIMIT && depth <= INLINE_MARKDOWN_DEPTH) {
      return yield* Effect.try({ try: () => turndownInline(html), catch: converterFailed })
    }
    return yield* turndownInWorker(html)
  })

/**
 * A fetched body in the requested format: HTML (a content type containing `text/html`) as Markdown or text, every
 * other body unchanged.
 *
 * @since 0.3.0
 * @category conversion
 */
export const convert = (body: string, contentType: string, format: Format): Effect.Effect<string, ConversionError> => {
  if (!contentType.includes("text/html")) return Effect.succeed(body)
  if (format === "markdown") return toMarkdownBounded(body)
  if (format === "text") return runPassChunked(textPass(), body)
  return Effect.succeed(body)
}
