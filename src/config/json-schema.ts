/**
 * The config file's JSON Schema, generated from the zod schema (`z.toJSONSchema`, input side: every
 * key optional, defaults shown) with each key's meaning from key-docs.ts. `gatehouse config schema`
 * prints it; config.schema.json is the committed copy a test keeps equal to it.
 */
import { z } from "zod";
import { KEY_DOCS } from "./key-docs.ts";
import { ConfigSchema } from "./schema.ts";

/** A JSON Schema node, as far as the walk and the reference page read it. */
export interface SchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  propertyNames?: SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
  [key: string]: unknown;
}

/** One key of the config, found by `schemaKeys`: its path (`tools.bySender.*.profile`) and the nodes that define it. */
export interface SchemaKey {
  path: string;
  /** A key can be defined by several alternatives (an MCP server's `timeoutMs`, in the stdio and HTTP forms). */
  nodes: SchemaNode[];
}

/** Every key the schema defines, in schema order: object properties, with `*` for a map's keys and `[]` for list items. */
export function schemaKeys(root: SchemaNode): SchemaKey[] {
  const found = new Map<string, SchemaNode[]>();
  const visit = (node: SchemaNode, path: string) => {
    for (const alternative of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) visit(alternative, path);
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const key = path ? `${path}.${name}` : name;
      found.set(key, [...(found.get(key) ?? []), child]);
      visit(child, key);
    }
    if (typeof node.additionalProperties === "object") {
      const entry = node.additionalProperties;
      // A map of plain values (headers, env) has no keys of its own to describe.
      if (entry.properties || entry.anyOf || entry.oneOf) {
        found.set(`${path}.*`, [...(found.get(`${path}.*`) ?? []), entry]);
        visit(entry, `${path}.*`);
      }
    }
    if (node.items) visit(node.items, `${path}[]`);
  };
  visit(root, "");
  return [...found].map(([path, nodes]) => ({ path, nodes }));
}

/** The config file's JSON Schema, with a description on every key. */
export function configJsonSchema(): SchemaNode {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as SchemaNode;
  for (const key of schemaKeys(schema)) {
    const meaning = KEY_DOCS[key.path];
    for (const node of key.nodes) if (meaning && !node.description) node.description = meaning;
  }
  return {
    $schema: schema.$schema,
    title: "Gatehouse configuration",
    description: "The file named by GATEHOUSE_CONFIG (JSON or JSON5). Every key is optional; the environment overrides the file. Reference: docs/config.md.",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}

/** The schema as the committed file holds it: two-space JSON with a final newline. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
