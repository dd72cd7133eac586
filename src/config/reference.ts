/**
 * The reference page of every config key (docs/config.md): its type, default, environment
 * variable and meaning, generated from the same JSON Schema `gatehouse config schema` prints, so
 * the page cannot drift from what the bot accepts. `gatehouse config docs` prints it.
 */
import { envSourceOf } from "./load.ts";
import { configJsonSchema, schemaKeys, type SchemaNode } from "./json-schema.ts";

const HEADER = `# Configuration reference

<!-- Generated from the config schema by \`gatehouse config docs\` (run \`npm run config:docs\` after changing
     src/config/schema.ts or src/config/key-docs.ts); a test keeps this page current. Do not edit by hand. -->

Gatehouse reads its settings from the environment (and \`.env\`) and from an optional config file named by
\`GATEHOUSE_CONFIG\` (JSON or JSON5); the environment overrides the file. Every key is optional. A bad value
stops the bot at start with one message listing every invalid key. The JSON Schema of the file is
[\`config.schema.json\`](../config.schema.json): put \`"$schema": "./config.schema.json"\` (the path from your
file) at the top for completion and checks in an editor. \`gatehouse config show\` prints the configuration the
bot would run with, secrets masked.

Keys are written with dots (\`model.name\` is \`{ "model": { "name": … } }\`); \`*\` stands for a key you choose
(a sender, a conversation, a server name), \`[]\` for each item of a list.
`;

/** The whole page, as committed in docs/config.md. */
export function configReference(schema: SchemaNode = configJsonSchema()): string {
  const keys = schemaKeys(schema);
  const topLevel = Object.keys(schema.properties ?? {});
  const isSection = (name: string) => keys.some((k) => k.path.startsWith(`${name}.`) || k.path.startsWith(`${name}[]`));
  const out = [HEADER, "## Top level", "", ...table(keys.filter((k) => topLevel.includes(k.path) && !isSection(k.path)).map((k) => row(k.path, k.nodes)))];
  for (const name of topLevel.filter(isSection)) {
    const node = schema.properties![name]!;
    out.push("", `## \`${name}\``, "");
    if (node.description) out.push(escapeAngles(node.description), "");
    // The section's own row would repeat its description; its type is in the heading's table rows.
    const inner = keys.filter((k) => k.path.startsWith(`${name}.`) || k.path.startsWith(`${name}[]`));
    out.push(...table(inner.map((k) => row(k.path, k.nodes))));
  }
  return `${out.join("\n")}\n`;
}

function table(rows: string[]): string[] {
  return ["| key | type | default | environment | meaning |", "|---|---|---|---|---|", ...rows];
}

function row(path: string, nodes: SchemaNode[]): string {
  const node = nodes[0]!;
  const env = envSourceOf(path);
  const cells = [`\`${path}\``, typeName(nodes), defaultOf(node), env ? `\`${env}\`` : "", nodes.find((n) => n.description)?.description ?? ""];
  return `| ${cells.map(cell).join(" | ")} |`;
}

/** Text safe in a table cell: pipes escaped, and `<data dir>` kept from reading as an HTML tag. */
const cell = (text: string) => escapeAngles(text).replace(/\|/g, "\\|").replace(/\n/g, " ");
const escapeAngles = (text: string) => text.replace(/</g, "&lt;");

/** A short type: `integer 1–100`, `"a" \| "b"`, `list of string`, `map of object`, `URL`. */
function typeName(nodes: SchemaNode[]): string {
  const names = [...new Set(nodes.map(typeOfNode))];
  return names.join(" or ");
}

function typeOfNode(node: SchemaNode): string {
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (node.const !== undefined) return JSON.stringify(node.const);
  const alternatives = node.anyOf ?? node.oneOf;
  if (alternatives) return [...new Set(alternatives.map(typeOfNode))].join(" or ");
  const type = Array.isArray(node.type) ? node.type.join(" or ") : node.type;
  if (type === "integer" || type === "number") return `${type}${range(node)}`;
  if (type === "string") return node.format === "uri" ? "URL" : "string";
  if (type === "array") return `list of ${node.items ? typeOfNode(node.items) : "values"}`;
  if (type === "object") {
    if (node.properties) return "object";
    if (typeof node.additionalProperties === "object") return `map of ${typeOfNode(node.additionalProperties)}`;
    return "object";
  }
  return type ?? "any";
}

const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function range(node: SchemaNode): string {
  const max = node.maximum !== undefined && node.maximum < UNBOUNDED ? node.maximum : undefined;
  if (node.minimum !== undefined && node.minimum <= -UNBOUNDED) return max !== undefined ? ` ≤ ${max}` : "";
  if (node.exclusiveMinimum !== undefined) return max !== undefined ? ` > ${node.exclusiveMinimum}, ≤ ${max}` : ` > ${node.exclusiveMinimum}`;
  if (node.minimum !== undefined && max !== undefined) return ` ${node.minimum}–${max}`;
  if (node.minimum !== undefined) return ` ≥ ${node.minimum}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return "";
}

function defaultOf(node: SchemaNode): string {
  if (!("default" in node)) return "";
  const value = node.default;
  // An object section's default is "every key at its own default": nothing to show.
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0) return "";
  return `\`${JSON.stringify(value)}\``;
}
