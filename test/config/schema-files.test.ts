import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { configJsonSchema, configJsonSchemaText, schemaKeys } from "../../src/config/json-schema.ts";
import { configReference } from "../../src/config/reference.ts";
import { KEY_DOCS } from "../../src/config/key-docs.ts";
import { loadConfig } from "../../src/config/load.ts";
import { maskedConfig, MASK } from "../../src/cli/config.ts";

const REPO = path.resolve(import.meta.dirname, "../..");
const REGENERATE = "run `npm run config:docs` and commit the result";

describe("the config schema and its reference page", () => {
  it("committed as config.schema.json, equal to what `gatehouse config schema` prints", () => {
    expect(readFileSync(path.join(REPO, "config.schema.json"), "utf8"), REGENERATE).toBe(configJsonSchemaText());
  });

  it("committed as docs/config.md, equal to what `gatehouse config docs` prints", () => {
    expect(readFileSync(path.join(REPO, "docs/config.md"), "utf8"), REGENERATE).toBe(configReference());
  });

  it("gives every key a meaning, and names no key the schema does not have", () => {
    const keys = schemaKeys(configJsonSchema());
    const undocumented = keys.filter((k) => !k.nodes.some((n) => n.description)).map((k) => k.path);
    expect(undocumented, "describe these keys in src/config/key-docs.ts (or with .describe() in the schema)").toEqual([]);
    const known = new Set(keys.map((k) => k.path));
    expect(Object.keys(KEY_DOCS).filter((p) => !known.has(p)), "these entries of src/config/key-docs.ts name no key").toEqual([]);
  });

  it("documents the keys the issue found undocumented, with their defaults", () => {
    const page = configReference();
    for (const [key, def] of [
      ["model.maxRetries", "`2`"], ["engine.spillToolResultChars", "`200000`"], ["engine.duplicateExempt", "`[]`"],
      ["gateway.maxConcurrentTurns", "`32`"], ["gateway.dedupeTtlMs", "`86400000`"], ["slack.access.refusalCooldownMs", "`600000`"],
      ["http.timeoutMs", "`15000`"], ["shell.timeoutMs", "`60000`"],
    ] as const) {
      expect(page).toMatch(new RegExp(`\\| \`${key.replace(/\./g, "\\.")}\` \\| [^|]+ \\| ${def.replace(/[[\]]/g, "\\$&")} \\|`));
    }
    expect(page).toMatch(/\| `slack\.port` \| integer 0–65535 \| {2}\| {2}\| HTTP Events API/);
    expect(page).toMatch(/\| `httpPort` \| [^|]+ \| {2}\| `PORT` \|/);
  });

  it("accepts $schema in the config file", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gh-schema-"));
    try {
      writeFileSync(path.join(dir, "gatehouse.json"), JSON.stringify({ $schema: "./config.schema.json", engine: { maxIterations: 3 } }));
      const config = loadConfig({ cwd: dir, env: { GATEHOUSE_CONFIG: "gatehouse.json" } });
      expect(config.engine.maxIterations).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is a JSON Schema that lets every key be left out and refuses unknown ones", () => {
    const schema = configJsonSchema();
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.required ?? []).toEqual([]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.$schema).toMatchObject({ type: "string" });
  });
});

describe("gatehouse config show", () => {
  it("masks every secret, keeping a database URL's other parts", () => {
    const config = loadConfig({
      cwd: tmpdir(),
      env: {
        OPENAI_API_KEY: "sk-live-0123456789abcdef", SLACK_BOT_TOKEN: "xoxb-1-2-secret", SLACK_SIGNING_SECRET: "signing-secret-value",
        TELEGRAM_BOT_TOKEN: "123456:AAHsecretTokenValue", TELEGRAM_WEBHOOK_URL: "https://bot.example.com/tg", TELEGRAM_WEBHOOK_SECRET: "hook-secret",
        DATABASE_URL: "postgres://bot:pg-password-1@db.example.com:5432/gatehouse",
      },
    });
    config.mcp.servers.github = { ...config.mcp.servers.github, url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ghp_0123456789" } } as never;
    const shown = JSON.stringify(maskedConfig(config));
    for (const secret of ["sk-live-0123456789abcdef", "xoxb-1-2-secret", "signing-secret-value", "AAHsecretTokenValue", "hook-secret", "pg-password-1", "ghp_0123456789"]) {
      expect(shown).not.toContain(secret);
    }
    const masked = maskedConfig(config) as { model: { apiKey: string }; databaseUrl: string; telegram: { webhookUrl: string } };
    expect(masked.model.apiKey).toBe(MASK);
    expect(masked.databaseUrl).toBe(`postgres://bot:${MASK}@db.example.com:5432/gatehouse`);
    expect(masked.telegram.webhookUrl).toBe("https://bot.example.com/tg");
  });
});
