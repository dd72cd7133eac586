/**
 * An MCP server's input schema as the model endpoint will take it. Servers publish schemas that
 * validate fine for them but that OpenAI-compatible endpoints refuse with a 400 for the whole
 * request — so one careless server would break every message. Repaired here, without changing
 * what the schema accepts:
 *   - the root is always `type: "object"` (a missing or null type is refused);
 *   - `$schema` is dropped (some endpoints refuse the keyword);
 *   - an array without `items` gets `items: {}` ("array schema missing items");
 *   - draft-3 style `required: true` on a property moves into its parent's `required` list, and any
 *     other `required` that is not a list of names is dropped ("True is not of type 'array'").
 */

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);

/** Keywords whose value is one subschema. */
const ONE = ["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "additionalItems", "unevaluatedItems", "unevaluatedProperties"];
/** Keywords whose value is a list of subschemas. */
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/** Keywords whose value maps names to subschemas. */
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/** The schema offered to the model for an MCP tool whose server published `inputSchema`. */
export function offeredSchema(inputSchema: Schema): Schema {
  const { $schema: _ignored, ...rest } = repaired(inputSchema, 0);
  return { ...rest, type: "object" };
}

const MAX_DEPTH = 64;

function repaired(schema: Schema, depth: number): Schema {
  const out: Schema = { ...schema };
  if (depth > MAX_DEPTH) return out;
  const required = Array.isArray(out.required) ? out.required.filter((n): n is string => typeof n === "string") : [];
  if (isSchema(out.properties)) {
    const properties: Schema = {};
    for (const [name, property] of Object.entries(out.properties)) {
      if (isSchema(property) && typeof property.required === "boolean") {
        const { required: flag, ...others } = property;
        if (flag && !required.includes(name)) required.push(name);
        properties[name] = others;
      } else properties[name] = property;
    }
    out.properties = properties;
  }
  if (required.length) out.required = required;
  else delete out.required;
  for (const key of ONE) if (isSchema(out[key])) out[key] = repaired(out[key], depth + 1);
  for (const key of LIST) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map((s) => (isSchema(s) ? repaired(s, depth + 1) : s));
  }
  for (const key of MAP) {
    const map = out[key];
    if (!isSchema(map)) continue;
    out[key] = Object.fromEntries(Object.entries(map).map(([name, s]) => [name, isSchema(s) ? repaired(s, depth + 1) : s]));
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes("array") && out.items === undefined && out.prefixItems === undefined) out.items = {};
  return out;
}
