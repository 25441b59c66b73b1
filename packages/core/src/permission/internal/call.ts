/**
 * The tool call behind a permission request. `PermissionV2.fromToolCall` builds the request's `source` (the ids of
 * the call: assistant message and call id) as a `CallSource`, which also holds, privately, the call as the model
 * sent it and the tool's definition from the call's context. The request carries the source by reference, so the
 * pending queue reads them back when a client first reads the prompt (`Prompt.tool`, and the digest over it); the
 * request itself — the Asked event, `PermissionV2.get`, its JSON — carries only the ids, never the input twice.
 *
 * Nothing is hashed or serialised on the ask path: the definition digest is computed the first time a prompt of a
 * tool is read and kept per definition object (one per registered tool), the input's canonical JSON when the prompt
 * is computed.
 *
 * @since 0.3.0
 * @internal
 */
import type * as LLM from "../../values/llm.js"
import { definitionDigest } from "./protocol.js"
import type { ToolCall } from "./protocol.js"
import type { Source } from "./schema.js"

/** The fields of a call read here (a `LLM.ToolCall`). */
interface Call {
  readonly name: string
  readonly input: unknown
}

/**
 * A request source that also knows the call it came from. Its own enumerable fields are exactly `Source`'s, so
 * equality, spreading into plain objects, JSON and `Schema` encoding see only the ids.
 *
 * @since 0.3.0
 * @internal
 * @category models
 */
export class CallSource implements Source {
  readonly type: "tool"
  readonly messageID: string
  readonly callID: string
  readonly #call: Call
  readonly #definition: LLM.ToolDefinition

  constructor(messageID: string, callID: string, call: Call, definition: LLM.ToolDefinition) {
    this.type = "tool"
    this.messageID = messageID
    this.callID = callID
    this.#call = call
    this.#definition = definition
  }

  /** The call of `source`, when it is a `CallSource`: what `Prompt.tool` shows. */
  static toolOf(source: Source | undefined): ToolCall | undefined {
    if (!(source instanceof CallSource)) return undefined
    return {
      name: source.#call.name,
      callID: source.callID,
      input: source.#call.input,
      definition: digestOf(source.#definition),
    }
  }
}

const digests = new WeakMap<LLM.ToolDefinition, string>()

/** `definitionDigest` of `definition`, once per definition object (a registry advertises one per registered tool). */
const digestOf = (definition: LLM.ToolDefinition): string => {
  let digest = digests.get(definition)
  if (digest === undefined) digests.set(definition, (digest = definitionDigest(definition)))
  return digest
}
