/**
 * A small argument reader for the CLI's subcommands: `--name value`, `--flag`, and positionals.
 */
import { parseArgs } from "node:util";

export type ArgSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

/** Parses argv for `spec`; throws an Error with a readable message for unknown options. */
export function readArgs(argv: string[], spec: ArgSpec): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const { values, positionals } = parseArgs({ args: argv, options: spec, allowPositionals: true, strict: true });
  return { values: values as Record<string, string | boolean | undefined>, positionals };
}
