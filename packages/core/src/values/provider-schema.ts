/**
 * ProviderSchema: JSON Schemas that model providers accept. `normalize` turns what `JSONSchema.make` produces into
 * a self-contained schema that is valid under JSON Schema 2020-12 and draft-07 (references inlined, so no keyword
 * sits beside a `$ref`; Effect's internal refinement titles dropped). `toStrict` projects it onto the subset that
 * OpenAI's strict mode accepts (every property required, optional ones nullable, closed objects, and a record —
 * an object of arbitrary keys such as `Schema.Record` — as an array of `{ key, value }` pairs), and
 * `fromStrictInput` turns what a strict provider sends back into the tool's own shape (the `null` of an omitted
 * optional field becomes absent, pairs become the record). See docs/tool-contract.md.
 *
 * @since 0.2.0
 */
import * as EffectSchema from "effect/Schema"

/**
 * A JSON Schema document.
 *
 * @since 0.2.0
 * @category models
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
 * @category utilities
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
 * A schema `toStrict` cannot project: an object that has declared properties and also accepts other keys
 * (`Schema.Struct` with an index signature). Strict mode closes every object, so the other keys could never be
 * sent; rather than drop them silently, the projection fails naming the field (`path`, e.g. `input.headers`).
 *
 * @since 0.3.0
 * @category errors
 */
export class StrictProjectionError extends EffectSchema.TaggedError<StrictProjectionError>()(
  "ProviderSchema.StrictProjectionError",
  { path: EffectSchema.String },
) {
  override get message(): string {
    return `Cannot project ${this.path} to OpenAI strict mode: an object with declared properties that also accepts other keys cannot be closed without losing them; put the other keys in a record property of their own, or send the schemas unprojected`
  }
}

/** The value schema of a record node (arbitrary keys, nothing declared), or `undefined` for any other node. */
const recordOf = (node: Mutable): { readonly key: Schema; readonly value: Schema } | undefined => {
  const declared = isObject(node.properties) && Object.keys(node.properties).length > 0
  const additional = isObject(node.additionalProperties) ? node.additionalProperties : undefined
  const patterns = isObject(node.patternProperties) ? Object.values(node.patternProperties).filter(isObject) : []
  if (additional === undefined && patterns.length === 0) return undefined
  if (declared) return undefined
  const values = [...(additional === undefined ? [] : [additional]), ...patterns]
  const value = values.length === 1 ? values[0]! : { anyOf: values }
  const names = isObject(node.propertyNames) ? node.propertyNames : undefined
  const key: Mutable = { type: "string" }
  if (typeof names?.pattern === "string") key.pattern = names.pattern
  return { key, value }
}

const isMixed = (node: Mutable): boolean =>
  isObject(node.properties) &&
  Object.keys(node.properties).length > 0 &&
  (isObject(node.additionalProperties) || isObject(node.patternProperties))

/**
 * The OpenAI strict-mode projection of a normalized schema: every object lists all its properties in `required`
 * and is closed with `additionalProperties: false`; a property that was optional becomes nullable. A record (an
 * object of arbitrary keys: `additionalProperties` or `patternProperties` and no declared property) becomes an
 * array of `{ key, value }` pairs, which `fromStrictInput` turns back into the record; under strict mode a closed
 * empty object could only ever be sent as `{}`. Throws `StrictProjectionError` for an object that mixes declared
 * properties with other keys.
 *
 * @since 0.2.0
 * @category utilities
 */
export const toStrict = (schema: Schema): Schema => {
  const visit = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => visit(item, `${path}[${i}]`))
    if (!isObject(node)) return node
    const record = recordOf(node)
    if (record !== undefined) {
      const pairs: Mutable = {
        type: "array",
        items: {
          type: "object",
          properties: { key: record.key, value: visit(record.value, `${path}.<value>`) },
          required: ["key", "value"],
          additionalProperties: false,
        },
      }
      if (typeof node.description === "string") pairs.description = node.description
      return pairs
    }
    if (isMixed(node)) throw new StrictProjectionError({ path })
    const out: Mutable = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" || key === "$defs") continue
      out[key] =
        key === "items" ? visit(value, `${path}[]`) : key === "anyOf" || key === "oneOf" ? visit(value, path) : value
    }
    if (isObject(node.$defs)) {
      out.$defs = Object.fromEntries(
        Object.entries(node.$defs).map(([name, def]) => [name, visit(def, `$defs.${name}`)]),
      )
    }
    if (node.type === "object" || isObject(node.properties)) {
      const properties = isObject(node.properties) ? node.properties : {}
      const required = new Set(Array.isArray(node.required) ? (node.required as Array<string>) : [])
      const strictProperties: Mutable = {}
      for (const [name, property] of Object.entries(properties)) {
        const projected = visit(property, `${path}.${name}`) as Schema
        strictProperties[name] = required.has(name) ? projected : nullable(projected)
      }
      out.type = "object"
      out.properties = strictProperties
      out.required = Object.keys(properties)
      out.additionalProperties = false
      delete out.patternProperties
      delete out.propertyNames
    }
    return out
  }
  return visit(schema, "input") as Schema
}

const acceptsNull = (schema: Schema): boolean =>
  schema.type === "null" ||
  (Array.isArray(schema.type) && schema.type.includes("null")) ||
  (Array.isArray(schema.enum) && schema.enum.includes(null)) ||
  schema.const === null ||
  (Array.isArray(schema.anyOf) && schema.anyOf.some((option) => isObject(option) && acceptsNull(option)))

/**
 * `input` as a strict provider sent it, read against the normalized (non-strict) `schema`: a `null` given for an
 * optional property whose own schema does not accept `null` is removed, and an array of `{ key, value }` pairs
 * where the schema has a record becomes that record (a repeated key: the last one wins, as in JSON), recursively
 * through objects and arrays. Everything else is returned as is, so the tool's own decoding still judges the input.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromStrictInput = (schema: Schema, input: unknown): unknown => {
  const visit = (node: Schema, value: unknown): unknown => {
    const record = recordOf(node as Mutable)
    if (record !== undefined && Array.isArray(value)) {
      const pairs = value.every(
        (pair) => isObject(pair) && typeof pair.key === "string" && "value" in pair && Object.keys(pair).length === 2,
      )
      if (!pairs) return value
      const out: Mutable = {}
      for (const pair of value as Array<{ key: string; value: unknown }>) {
        Object.defineProperty(out, pair.key, {
          value: visit(record.value, pair.value),
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      return out
    }
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
