/**
 * The digest a reply must name: sha-256 (hex) over the RFC 8785 canonical JSON of
 * `{ tool: { name, definition, input } | null, action, resources, save }`, where `definition` is itself the
 * `definitionDigest` of the tool's definition (name, description, input JSON schema). Two asks with the same digest
 * showed the same thing; anything a prompt shows that could change what the answer allows is inside it.
 *
 * @since 0.3.0
 */
import { createHash } from "node:crypto"
import * as Canonicalize from "canonicalize"
import type { Request } from "./permission-schema.js"

/** RFC 8785 canonical JSON; a value JSON cannot carry (a cycle, a BigInt) is a defect of the caller. */
const canonical = (value: unknown): string => {
  const text = (Canonicalize.default as unknown as (input: unknown) => string | undefined)(value)
  if (text === undefined) throw new globalThis.Error("Approvals: the value has no canonical JSON form")
  return text
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * The digest of a tool's definition: sha-256 over the canonical JSON of its name, description and input schema.
 *
 * @since 0.3.0
 * @category digest
 */
export const definitionDigest = (definition: {
  readonly name: string
  readonly description: string
  readonly inputSchema: unknown
}): string =>
  sha256(canonical({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema }))

/**
 * The digest of a pending ask: over the tool call it came from (name, definition digest, full input; `null` for an
 * ask raised outside a tool call), the action, the resources in request order and the save patterns.
 *
 * @since 0.3.0
 * @category digest
 */
export const digest = (
  request: Pick<Request, "action" | "resources" | "save">,
  tool:
    | { readonly name: string; readonly definition: string; readonly input: unknown }
    | undefined,
): string =>
  sha256(
    canonical({
      tool: tool === undefined ? null : { name: tool.name, definition: tool.definition, input: tool.input },
      action: request.action,
      resources: request.resources,
      save: request.save ?? [],
    }),
  )
