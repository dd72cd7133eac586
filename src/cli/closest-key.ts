/**
 * "Did you mean …?" for unknown config keys: every key path the config schema knows, and the
 * closest one to a misspelt key by edit distance (Levenshtein).
 */
import type { z } from "zod";
import { levenshtein } from "../edit-distance.ts";

export { levenshtein };

/** The part of a zod 4 schema definition the walk reads (wrappers, objects, records, arrays, unions). */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
}

const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/**
 * Every key path in the schema, dotted; a record's free key is written `*`
 * (`tools.bySender.*.profile`), array items are skipped over (`hooks.tools`).
 */
export function schemaKeyPaths(schema: z.ZodType, prefix = ""): string[] {
  const def = defOf(schema);
  const join = (key: string) => (prefix ? `${prefix}.${key}` : key);
  switch (def.type) {
    case "object": {
      const out: string[] = [];
      for (const [key, child] of Object.entries(def.shape ?? {})) out.push(join(key), ...schemaKeyPaths(child, join(key)));
      return out;
    }
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
    case "readonly":
    case "catch":
      return def.innerType ? schemaKeyPaths(def.innerType, prefix) : [];
    case "pipe":
      return def.in ? schemaKeyPaths(def.in, prefix) : [];
    case "record":
      return [join("*"), ...(def.valueType ? schemaKeyPaths(def.valueType, join("*")) : [])];
    case "array":
      return def.element ? schemaKeyPaths(def.element, prefix) : [];
    case "union":
      return [...new Set((def.options ?? []).flatMap((o) => schemaKeyPaths(o, prefix)))];
    default:
      return [];
  }
}


/** Replaces record keys in a concrete path with `*` where the schema has a record there. */
function patternOf(concrete: string[], known: Set<string>): string[] {
  const out: string[] = [];
  for (const part of concrete) {
    const exact = [...out, part].join(".");
    out.push(known.has(exact) ? part : known.has([...out, "*"].join(".")) ? "*" : part);
  }
  return out;
}

/**
 * The valid key closest to an unknown one, as a full dotted path in the user's terms, or
 * undefined when nothing is close. `unknownPath` is the unknown key's full path
 * (`["slack", "botTokn"]`). Keys at the same level are preferred; a key put at the wrong level
 * (`botToken` at the top) is matched by its last segment anywhere.
 */
export function closestKey(unknownPath: string[], paths: readonly string[]): string | undefined {
  const known = new Set(paths);
  const parent = patternOf(unknownPath.slice(0, -1), known);
  const key = unknownPath.at(-1)!;
  const limit = Math.max(2, Math.floor(key.length / 3));
  const depth = parent.length;
  const siblings = paths.filter((p) => {
    const parts = p.split(".");
    return parts.length === depth + 1 && parts.slice(0, depth).join(".") === parent.join(".");
  });
  const best = (candidates: string[]) => {
    let found: { path: string; distance: number } | undefined;
    for (const p of candidates) {
      const distance = levenshtein(key, p.split(".").at(-1)!);
      if (distance <= limit && (!found || distance < found.distance)) found = { path: p, distance };
    }
    return found?.path;
  };
  const sibling = best(siblings);
  if (sibling) return [...unknownPath.slice(0, -1), sibling.split(".").at(-1)!].join(".");
  const elsewhere = best(paths.filter((p) => !p.includes("*")));
  return elsewhere;
}
