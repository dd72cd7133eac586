/**
 * Canonical JSON: one text for one value, whatever order its object keys were written in. The
 * engine's guards compare calls by it, approvals hash the exact arguments with it, config hooks
 * match against it, and receipts sign it.
 */

/**
 * JSON with object keys sorted at every depth, so equal values always give equal text.
 * Follows JSON.stringify otherwise (toJSON, undefined members dropped, non-finite → null).
 */
export function canonicalJson(value: unknown): string {
  return stringify(value) ?? "null";
}

function stringify(value: unknown): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "bigint":
      throw new TypeError("canonicalJson cannot encode a bigint");
    case "object":
      break;
    default:
      return undefined; // undefined, functions and symbols, as JSON.stringify drops them
  }
  if (Array.isArray(value)) return `[${value.map((item) => stringify(item) ?? "null").join(",")}]`;
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const encoded = stringify(record[key]);
    if (encoded !== undefined) members.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${members.join(",")}}`;
}
