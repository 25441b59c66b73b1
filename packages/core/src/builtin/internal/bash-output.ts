/**
 * The bash tool's output capture: the in-memory limit, the progress reports while the command runs, and the stream
 * of the complete output into a managed file once it outgrows the capture.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type * as ToolOutputStore from "../../tool/tool-output-store.js"
import type * as Tool from "../../tool/tool.js"
import * as AppProcess from "../../world/app-process.js"
import * as FileFailure from "./file-failure.js"

/**
 * The in-memory capture limit of the combined output (1 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CAPTURE_BYTES = 1_048_576

/**
 * The note that opens the output text when the output outgrew the in-memory capture but was kept complete in a
 * managed file (the capture-loss notice is used when it could not be kept).
 *
 * @since 0.1.0
 * @category utilities
 */
export const completeNotice = (bytes: number, file: string): string =>
  `[the command printed ${bytes} bytes; the complete output is saved to ${file}; below are the first ${MAX_CAPTURE_BYTES} bytes, as far as the in-memory capture goes]`

/** Progress reports are at most this frequent; output in between is sent with the next one. */
const PROGRESS_INTERVAL_MS = 250

/**
 * Watches the command's output: reports it (and the elapsed time) as progress, and once it outgrows the in-memory
 * capture streams all of it — the part already seen included — into a managed file, so nothing is lost and memory
 * stays bounded (the file is written synchronously, chunk by chunk).
 *
 * @internal
 */
export const streamOutput = (store: ToolOutputStore.Interface, context: Tool.Context) =>
  Effect.gen(function* () {
    const capture = yield* store.capture({ sessionID: context.sessionID, toolCallID: context.toolCallID })
    const started = Date.now()
    const decoder = new TextDecoder()
    let head: Array<Uint8Array> = []
    let total = 0
    let spilled = false
    let failed = false
    let pending = ""
    let reported = 0
    const report = (force: boolean) => {
      const progress = context.progress
      if (progress === undefined || (pending === "" && !force)) return
      const now = Date.now()
      if (!force && now - reported < PROGRESS_INTERVAL_MS) return
      reported = now
      const output = pending
      pending = ""
      progress({
        message: `running (${Math.round((now - started) / 1000)}s, ${total} bytes of output)`,
        progress: total,
        ...(output === "" ? {} : { output }),
      })
    }
    const keep = (chunk: Uint8Array) => {
      if (failed || capture.path === undefined) return
      try {
        if (!spilled && total > MAX_CAPTURE_BYTES) {
          spilled = true
          for (const part of head) capture.write(part)
          head = []
        }
        if (spilled) capture.write(chunk)
        else head.push(chunk)
      } catch {
        // The capture notice then reports the loss honestly.
        failed = true
        head = []
      }
    }
    return {
      onOutput: (chunk: Uint8Array) => {
        total += chunk.byteLength
        keep(chunk)
        if (context.progress !== undefined) {
          pending += decoder.decode(chunk, { stream: true })
          report(false)
        }
      },
      flush: () => report(false),
      total: () => total,
      /**
       * The complete-output file, when all of the output is in it; it is then marked complete, so the store's
       * bounding names it instead of writing a second copy.
       */
      keep: (): string | undefined => {
        if (!spilled || failed || !capture.written()) return undefined
        capture.complete()
        return capture.path
      },
    }
  })

/**
 * Why the command could not run, in one line: what the file leaves say for path and file-system errors and a
 * missing session, a spawn failure's own cause, else the typed error's message.
 *
 * @since 0.3.0
 * @internal
 */
export const failureReason = (error: unknown): string => {
  const known = FileFailure.cause(error)
  if (known !== undefined) return known
  if (error instanceof AppProcess.AppProcessError) {
    const cause = error.cause
    if (cause instanceof Error && cause.message !== "") return cause.message
  }
  if (error instanceof Error && error.message !== "") return error.message
  if (typeof error === "object" && error !== null && "_tag" in error) return String(error._tag)
  return String(error)
}

/**
 * The call's context with the description in front of every progress message.
 *
 * @since 0.3.0
 * @internal
 */
export const described = (context: Tool.Context, description: string | undefined): Tool.Context => {
  const progress = context.progress
  if (description === undefined || progress === undefined) return context
  return { ...context, progress: (update) => progress({ ...update, message: `${description}: ${update.message}` }) }
}
