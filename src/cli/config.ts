/**
 * `gatehouse config schema | show | docs`: the config file's JSON Schema, the configuration the bot
 * would run with (file, environment and defaults merged, secrets masked), and the reference page of
 * every key. `schema` and `docs` print what config.schema.json and docs/config.md hold.
 */
import path from "node:path";
import { configSecrets, loadConfig, rawConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { configJsonSchemaText } from "../config/json-schema.ts";
import { configReference } from "../config/reference.ts";
import { registerSecret, scrubSecrets } from "../observe/scrub.ts";

const USAGE = "usage: gatehouse config schema | show | docs\n";

/** Shown instead of a secret's value. */
export const MASK = "***";

/** Keys whose value is a secret wherever they appear. */
const SECRET_KEY = /^(apiKey|botToken|appToken|signingSecret|token|webhookSecret|key|password)$/;
/** Maps whose every value may be a secret (an MCP server's headers and environment). */
const SECRET_MAPS = new Set(["headers", "env"]);

export async function runConfig(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (rest.length) {
    process.stderr.write(`gatehouse config ${sub}: unexpected "${rest[0]}"\n${USAGE}`);
    return 2;
  }
  if (sub === "schema" || sub === "docs") {
    process.stdout.write(sub === "schema" ? configJsonSchemaText() : configReference());
    return 0;
  }
  if (sub === "show") {
    const config = loadConfig();
    const file = rawConfig().file;
    process.stderr.write(`# the configuration the bot would run with: ${file ? `${path.relative(process.cwd(), file) || file} + ` : ""}environment + defaults; secrets masked\n`);
    process.stdout.write(`${JSON.stringify(maskedConfig(config), null, 2)}\n`);
    return 0;
  }
  process.stderr.write(sub ? `gatehouse config: unknown subcommand "${sub}"\n${USAGE}` : USAGE);
  return 2;
}

/** A copy of the config with every secret replaced by MASK (a database URL keeps all but its password). */
export function maskedConfig(config: Config): unknown {
  for (const secret of configSecrets(config)) registerSecret(secret);
  const mask = (value: unknown, key: string | undefined, inSecretMap: boolean): unknown => {
    if (typeof value === "string") {
      if (inSecretMap || (key && SECRET_KEY.test(key))) return MASK;
      if (key === "databaseUrl") return maskUrlPassword(value);
      return scrubSecrets(value);
    }
    if (Array.isArray(value)) return value.map((item) => mask(item, undefined, false));
    if (value && typeof value === "object") {
      const secretMap = key !== undefined && SECRET_MAPS.has(key);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k, secretMap)]));
    }
    return value;
  };
  return mask(config, undefined, false);
}

function maskUrlPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = MASK;
    return parsed.toString();
  } catch {
    return MASK;
  }
}
