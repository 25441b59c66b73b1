/**
 * ProviderSchema: JSON Schemas that model providers accept. `normalize` turns what `JSONSchema.make` produces into
 * a self-contained schema that is valid under JSON Schema 2020-12 and draft-07 (references inlined, so no keyword
 * sits beside a `$ref`; Effect's internal refinement titles dropped). `toStrict` projects it onto the subset that
 * OpenAI's strict mode accepts (every property required, optional ones nullable, closed objects), and
 * `fromStrictInput` turns the `null` a strict provider sends for an omitted optional field back into an absent one.
 * See docs/tool-contract.md.
 *
 * @since 0.2.0
 */

/**
 * A JSON Schema document.
 *
 * @since 0.2.0
 */
export type Schema = { readonly [key: string]: unknown }

type Mutable = { [key: string]: unknown }

const isObject = (value: unknown): value is Mutable =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const DEFINITIONS = ["$defs", "definitions"] as const

const referenced = (ref: string, defs: Readonly<Record<string, unknown>>): Schema | undefined => {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)
  if (match === null) return undefined
  const name = match[1]!.replace(/~1/g, "/").replace(/~0/g, "~")
  const found = defs[name]
  return isObject(found) ? found : undefined
}

/**
 * A provider-ready copy of `schema`: `$ref`s into its own definitions are inlined (the referring node's own
 * keywords win over the definition's), `title`s are removed, and the definitions table disappears. A recursive
 * reference is left as a bare `$ref` and its definition is kept under `$defs`.
 *
 * @since 0.2.0
 */
export const normalize = (schema: Schema): Schema => {
  const defs: Record<string, unknown> = {}
  for (const key of DEFINITIONS) if (isObject(schema[key])) Object.assign(defs, schema[key])
  const kept = new Map<string, unknown>()

  const visit = (node: unknown, stack: ReadonlyArray<string>): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, stack))
    if (!isObject(node)) return node
    if (typeof node.$ref === "string") {
      const target = referenced(node.$ref, defs)
      const name = node.$ref.replace(/^#\/(?:\$defs|definitions)\//, "")
      if (target !== undefined && stack.includes(name)) {
        if (!kept.has(name)) {
          kept.set(name, null)
          kept.set(name, visit(target, stack))
        }
        return { $ref: `#/$defs/${name}` }
      }
      if (target !== undefined) {
        const { $ref: _, ...siblings } = node
        return visit({ ...target, ...siblings }, [...stack, name])
      }
    }
    const out: Mutable = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "title" || key === "$schema" || key === "$defs" || key === "definitions") continue
      if (key === "properties" && isObject(value)) {
        const properties: Mutable = {}
        for (const [name, property] of Object.entries(value)) properties[name] = visit(property, stack)
        out[key] = properties
      } else out[key] = visit(value, stack)
    }
    return out
  }

  const result = visit(schema, []) as Mutable
  if (kept.size > 0) result.$defs = Object.fromEntries(kept)
  return result
}

const NULL: Schema = { type: "null" }

/** `schema` that also accepts `null` (a type list when possible, else an `anyOf`). */
const nullable = (schema: Schema): Schema => {
  const type = schema.type
  if (typeof type === "string" && schema.enum === undefined && schema.const === undefined) {
    return type === "null" ? schema : { ...schema, type: [type, "null"] }
  }
  if (Array.isArray(type) && schema.enum === undefined && schema.const === undefined) {
    return type.includes("null") ? schema : { ...schema, type: [...type, "null"] }
  }
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.some((option) => isObject(option) && option.type === "null")
      ? schema
      : { ...schema, anyOf: [...schema.anyOf, NULL] }
  }
  const { description, ...rest } = schema
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, NULL] }
}

/**
 * The OpenAI strict-mode projection of a normalized schema: every object lists all its properties in `required`
 * and is closed with `additionalProperties: false`; a property that was optional becomes nullable.
 *
 * @since 0.2.0
 */
export const toStrict = (schema: Schema): Schema => {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (!isObject(node)) return node
    const out: Mutable = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" || key === "$defs") continue
      out[key] = key === "items" || key === "anyOf" || key === "oneOf" ? visit(value) : value
    }
    if (isObject(node.$defs)) {
      out.$defs = Object.fromEntries(Object.entries(node.$defs).map(([name, def]) => [name, visit(def)]))
    }
    if (node.type === "object" || isObject(node.properties)) {
      const properties = isObject(node.properties) ? node.properties : {}
      const required = new Set(Array.isArray(node.required) ? (node.required as Array<string>) : [])
      const strictProperties: Mutable = {}
      for (const [name, property] of Object.entries(properties)) {
        const projected = visit(property) as Schema
        strictProperties[name] = required.has(name) ? projected : nullable(projected)
      }
      out.type = "object"
      out.properties = strictProperties
      out.required = Object.keys(properties)
      out.additionalProperties = false
    }
    return out
  }
  return visit(schema) as Schema
}

const acceptsNull = (schema: Schema): boolean =>
  schema.type === "null" ||
  (Array.isArray(schema.type) && schema.type.includes("null")) ||
  (Array.isArray(schema.enum) && schema.enum.includes(null)) ||
  schema.const === null ||
  (Array.isArray(schema.anyOf) && schema.anyOf.some((option) => isObject(option) && acceptsNull(option)))

/**
 * `input` as a strict provider sent it, read against the normalized (non-strict) `schema`: a `null` given for an
 * optional property whose own schema does not accept `null` is removed, recursively through objects and arrays.
 * Everything else is returned as is, so the tool's own decoding still judges the input.
 *
 * @since 0.2.0
 */
export const fromStrictInput = (schema: Schema, input: unknown): unknown => {
  const visit = (node: Schema, value: unknown): unknown => {
    if (Array.isArray(value)) {
      return isObject(node.items) ? value.map((item) => visit(node.items as Schema, item)) : value
    }
    if (!isObject(value) || !isObject(node.properties)) return value
    const required = new Set(Array.isArray(node.required) ? (node.required as Array<string>) : [])
    const out: Mutable = {}
    for (const [name, item] of Object.entries(value)) {
      const property = node.properties[name]
      if (!isObject(property)) {
        out[name] = item
        continue
      }
      if (item === null && !required.has(name) && !acceptsNull(property)) continue
      out[name] = visit(property, item)
    }
    return out
  }
  return visit(schema, input)
}
