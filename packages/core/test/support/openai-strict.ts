/**
 * A checker for OpenAI's published strict-mode rules for function parameters (Structured Outputs "supported
 * schemas"), written from the documentation: the root is an object (not `anyOf`); every object sets
 * `additionalProperties: false` and lists all its properties in `required`; only supported keywords appear; a
 * `$ref` has no sibling keywords; at most 10 levels of nesting, 5,000 properties and 1,000 enum values.
 * Returns the list of violations (empty = accepted).
 */
const SUPPORTED = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "description",
  // String, number and array constraints OpenAI lists as supported.
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const openAiStrictViolations = (schema: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let properties = 0
  let enumValues = 0
  if (!isObject(schema)) return ["root: not an object schema"]
  if (schema.type !== "object") problems.push(`root: type must be "object", got ${JSON.stringify(schema.type)}`)
  if ("anyOf" in schema) problems.push("root: anyOf is not allowed at the root")

  const visit = (node: unknown, at: string, depth: number): void => {
    if (!isObject(node)) {
      problems.push(`${at}: not a schema object`)
      return
    }
    if (depth > 10) problems.push(`${at}: nesting deeper than 10 levels`)
    for (const key of Object.keys(node)) if (!SUPPORTED.has(key)) problems.push(`${at}: unsupported keyword ${key}`)
    if ("$ref" in node && Object.keys(node).some((key) => key !== "$ref")) {
      problems.push(`${at}: $ref must not have sibling keywords`)
    }
    const types = Array.isArray(node.type) ? node.type : [node.type]
    if (types.includes("object") || isObject(node.properties)) {
      if (node.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`)
      const declared = isObject(node.properties) ? Object.keys(node.properties) : []
      const required = Array.isArray(node.required) ? node.required : []
      for (const name of declared)
        if (!required.includes(name)) problems.push(`${at}: property ${name} not in required`)
      for (const name of required) {
        if (!declared.includes(name as string)) problems.push(`${at}: required ${String(name)} is not a property`)
      }
      properties += declared.length
      if (isObject(node.properties)) {
        for (const [name, property] of Object.entries(node.properties)) visit(property, `${at}.${name}`, depth + 1)
      }
    }
    if (node.items !== undefined) visit(node.items, `${at}[]`, depth + 1)
    if (Array.isArray(node.anyOf)) node.anyOf.forEach((option, i) => visit(option, `${at}|${i}`, depth + 1))
    if (isObject(node.$defs)) for (const [name, def] of Object.entries(node.$defs)) visit(def, `$defs.${name}`, 1)
    if (Array.isArray(node.enum)) enumValues += node.enum.length
  }
  visit(schema, "root", 1)
  if (properties > 5000) problems.push(`more than 5000 properties (${properties})`)
  if (enumValues > 1000) problems.push(`more than 1000 enum values (${enumValues})`)
  return problems
}
