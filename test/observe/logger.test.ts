import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/observe/logger.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import { configSecrets } from "../../src/config/load.ts";

describe("the logger", () => {
  it("writes JSON lines and never shows a seeded secret, by key or by value", () => {
    const lines: string[] = [];
    const secret = "seeded-secret-value-1234567890";
    const log = createLogger({ level: "info", secrets: [secret], destinations: [{ write: (l: string) => void lines.push(l) }] });
    log.info({ token: "xoxb-111-222-abcdefghijkl", headers: { authorization: "Bearer abc.def.ghi.jkl" } }, "connecting");
    log.info({ detail: `the key is ${secret} ok` }, `message with ${secret}`);
    log.warn({ url: "https://x/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe" }, "telegram call");
    const text = lines.join("");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(text).not.toContain(secret);
    expect(text).not.toContain("xoxb-111-222");
    expect(text).not.toContain("abc.def.ghi.jkl");
    expect(text).not.toContain("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw");
    expect(text).toContain("[redacted]");
  });
});

describe("the logger's censoring by key", () => {
  it("censors secret fields at the top and one level down, and leaves the logged object unchanged", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", destinations: [{ write: (l: string) => void lines.push(l) }] });
    const fields = { apiKey: "short", config: { password: "pw", name: "kept" }, list: ["a"], n: 1 };
    log.info(fields, "starting");
    const line = JSON.parse(lines[0]!);
    expect(line.apiKey).toBe("[redacted]");
    expect(line.config).toEqual({ password: "[redacted]", name: "kept" });
    expect(line.list).toEqual(["a"]);
    expect(line.n).toBe(1);
    expect(fields.apiKey).toBe("short");
    expect(fields.config.password).toBe("pw");
  });
});

describe("the secrets of the config", () => {
  it("include what MCP servers are given to authenticate (environment and header values), so their stderr in the log is masked", () => {
    const config = ConfigSchema.parse({
      mcp: {
        servers: {
          db: { command: "db-mcp", env: { DBPW: "Zq81mK0pLw7Xv2", NODE_ENV: "production" } },
          tickets: { url: "https://mcp.example.test/mcp", headers: { Authorization: "Bearer tok_live_5f2a9c81d3" } },
        },
      },
    });
    const lines: string[] = [];
    const log = createLogger({ level: "debug", secrets: configSecrets(config), destinations: [{ write: (l: string) => void lines.push(l) }] });
    log.debug({ stderr: "connecting with Zq81mK0pLw7Xv2 in production" }, "MCP server stderr");
    log.warn({ err: "401 for token tok_live_5f2a9c81d3" }, "MCP server refused");
    const text = lines.join("");
    expect(text).not.toMatch(/Zq81mK0pLw7Xv2|tok_live_5f2a9c81d3/);
    expect(text).toContain("in production");
  });
});
