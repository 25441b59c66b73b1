/**
 * The capture files of `ToolOutputStore`: output a tool streams to disk while it runs (the bash leaf, past its
 * in-memory capture), kept per call until the call's `bound` names them. Each file is created exclusively, written
 * synchronously chunk by chunk, and removed when the capture fails or its scope ends in failure.
 *
 * @since 0.3.0
 */
import * as nodeFs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Identifier from "../../values/identifier.js"

/**
 * What was captured for one call: its files, and the one its producer declared complete.
 *
 * @since 0.3.0
 * @internal
 */
export interface Captured {
  readonly files: Array<string>
  complete?: string
}

/**
 * The captures of one store directory: `capture` opens one for a call, `take` hands over (and forgets) what a call
 * captured, or `undefined` when it captured nothing.
 *
 * @since 0.3.0
 * @internal
 */
export const make = (directory: string) => {
  // Captured files per call, until `bound` lists them; bounded so calls that never reach `bound` cannot pile up.
  // `complete` names the file its producer declared complete.
  const captured = new Map<string, Captured>()
  const callKey = (sessionID: string, toolCallID: string) => `${sessionID}\u0000${toolCallID}`

  const capture = Effect.fn("ToolOutputStore.capture")(function* (input: {
    readonly sessionID: string
    readonly toolCallID: string
  }) {
    const file = path.join(directory, `tool_${Identifier.ascending()}`)
    const key = callKey(input.sessionID, input.toolCallID)
    let fd: number | undefined
    let broken: unknown
    let created = false
    /** Closes the file, and removes it (and forgets it) unless it is to be kept. */
    const close = (remove: boolean) => {
      if (fd !== undefined) {
        const open = fd
        fd = undefined
        try {
          nodeFs.closeSync(open)
        } catch {
          // Closing cannot fail in a way that matters here; the file is removed below if it must be.
        }
      }
      if (!remove || !created) return
      created = false
      try {
        nodeFs.unlinkSync(file)
      } catch {
        // Already gone.
      }
      const entry = captured.get(key)
      if (entry === undefined) return
      const at = entry.files.indexOf(file)
      if (at !== -1) entry.files.splice(at, 1)
      if (entry.complete === file) delete entry.complete
      if (entry.files.length === 0) captured.delete(key)
    }
    yield* Effect.addFinalizer((exit) => Effect.sync(() => close(Exit.isFailure(exit))))
    return {
      path: file,
      written: () => created,
      complete: () => {
        const entry = captured.get(key)
        if (created && entry !== undefined) entry.complete = file
      },
      write: (chunk: Uint8Array) => {
        if (broken !== undefined) throw broken
        try {
          if (fd === undefined) {
            nodeFs.mkdirSync(directory, { recursive: true })
            fd = nodeFs.openSync(file, "wx", 0o600)
            created = true
            const entry = captured.get(key)
            if (entry === undefined) captured.set(key, { files: [file] })
            else entry.files.push(file)
            if (captured.size > 1024) captured.delete(captured.keys().next().value!)
          }
          for (let offset = 0; offset < chunk.byteLength;)
            offset += nodeFs.writeSync(fd, chunk, offset, chunk.byteLength - offset)
        } catch (error) {
          // A partial file would keep a full disk full and name output it does not hold: it goes.
          broken = error
          close(true)
          throw error
        }
      },
    }
  })

  const take = (sessionID: string, toolCallID: string): Captured | undefined => {
    if (captured.size === 0) return undefined
    const key = callKey(sessionID, toolCallID)
    const entry = captured.get(key)
    if (entry !== undefined) captured.delete(key)
    return entry
  }

  return { capture, take }
}
