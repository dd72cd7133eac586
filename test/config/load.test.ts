import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigError, channelsToStart, loadConfig, modelEndpointProblem } from "../../src/config/load.ts";

const dir = () => mkdtempSync(path.join(tmpdir(), "gh-config-"));

describe("configuration", () => {
  it("reads the model endpoint, data folder and log level from the environment", () => {
    const cwd = dir();
    const config = loadConfig({
      cwd,
      env: { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", GATEHOUSE_MODEL: "llama3.1", GATEHOUSE_DATA_DIR: "state", LOG_LEVEL: "debug" },
    });
    expect(config.model.baseURL).toBe("http://127.0.0.1:11434/v1");
    expect(config.model.name).toBe("llama3.1");
    expect(config.dataDir).toBe(path.join(cwd, "state"));
    expect(config.workspace).toBe(path.join(cwd, "state", "workspace"));
    expect(config.logLevel).toBe("debug");
  });

  it("takes a JSON5 config file named by GATEHOUSE_CONFIG, with the environment on top", () => {
    const cwd = dir();
    writeFileSync(
      path.join(cwd, "gatehouse.json5"),
      `{ // comments are fine\n model: { name: "from-file", toolProtocol: "text" }, tools: { deny: ["shell"] }, }`,
    );
    const config = loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "gatehouse.json5", GATEHOUSE_MODEL: "from-env", OPENAI_API_KEY: "sk-x" } });
    expect(config.model.name).toBe("from-env");
    expect(config.model.toolProtocol).toBe("text");
    expect(config.tools.deny).toEqual(["shell"]);
  });

  it("lists every invalid key in one message, naming environment variables", () => {
    const cwd = dir();
    writeFileSync(path.join(cwd, "c.json"), JSON.stringify({ engine: { maxIterations: 0 }, tols: {}, approval: { autonomy: "yolo" } }));
    let error: unknown;
    try {
      loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "c.json", LOG_LEVEL: "loud", SLACK_BOT_TOKEN: "xapp-wrong-kind", OPENAI_BASE_URL: "not a url" } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/LOG_LEVEL \(logLevel\)/);
    expect(message).toMatch(/SLACK_BOT_TOKEN \(slack\.botToken\): must be a bot token starting with xoxb-/);
    expect(message).toMatch(/OPENAI_BASE_URL \(model\.baseURL\): must be an http:\/\/ or https:\/\/ URL/);
    expect(message).toMatch(/engine\.maxIterations/);
    expect(message).toMatch(/tols: unknown key/);
    expect(message).toMatch(/approval\.autonomy/);
    expect((error as ConfigError).problems.length).toBeGreaterThanOrEqual(6);
    expect(message).not.toMatch(/at .*\.ts:\d+/);
  });

  it("refuses what would start a broken bot: a port that is not a number, a URL without http://, a channel named twice", () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ cwd: dir(), env });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ PORT: " " })).toEqual([expect.stringMatching(/^PORT \(httpPort\): .*expected number/)]);
    expect(problems({ PORT: "0x50" })).toEqual([expect.stringMatching(/^PORT \(httpPort\)/)]);
    expect(problems({ OPENAI_BASE_URL: "localhost:8787" })).toEqual([expect.stringMatching(/^OPENAI_BASE_URL \(model\.baseURL\): must be an http:\/\/ or https:\/\/ URL/)]);
    expect(problems({ GATEHOUSE_CHANNELS: "telegram, telegram", TELEGRAM_BOT_TOKEN: "123456:ABCDEFabcdef" })).toEqual([
      "GATEHOUSE_CHANNELS (channels): name each channel once (a channel started twice competes with itself)",
    ]);
    expect(loadConfig({ cwd: dir(), env: { PORT: "8080", OPENAI_BASE_URL: "https://api.example.test/v1" } })).toMatchObject({ httpPort: 8080 });
  });

  it("says what is wrong with an MCP server that fits neither form (command or url), key by key", () => {
    const cwd = dir();
    const problems = (servers: unknown) => {
      writeFileSync(path.join(cwd, "c.json"), JSON.stringify({ mcp: { servers } }));
      try {
        loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "c.json" } });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ files: { comand: "npx" } })).toEqual([
      "mcp.servers.files: fits none of its 2 forms (form 1: mcp.servers.files.command: required (string); mcp.servers.files.comand: unknown key (run `gatehouse doctor` for the closest valid key) — or form 2: mcp.servers.files.url: required (string); mcp.servers.files.comand: unknown key (run `gatehouse doctor` for the closest valid key))",
    ]);
    expect(problems({ files: { command: 5 } })).toEqual(["mcp.servers.files.command: Invalid input: expected string, received number"]);
  });

  it("explains how to set a model endpoint when none is configured, including local servers", () => {
    const config = loadConfig({ cwd: dir(), env: {} });
    const problem = modelEndpointProblem(config);
    expect(problem).toMatch(/OPENAI_API_KEY/);
    expect(problem).toMatch(/OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:11434\/v1/);
    expect(modelEndpointProblem(loadConfig({ cwd: dir(), env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } }))).toBeUndefined();
  });

  it("starts the console when no platform token is set, and each channel whose token is set", () => {
    expect(channelsToStart(loadConfig({ cwd: dir(), env: {} }))).toEqual(["console"]);
    const both = loadConfig({ cwd: dir(), env: { SLACK_BOT_TOKEN: "xoxb-1-2-abc", TELEGRAM_BOT_TOKEN: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ" } });
    expect(channelsToStart(both)).toEqual(["slack", "telegram"]);
    expect(channelsToStart(loadConfig({ cwd: dir(), env: { GATEHOUSE_CHANNELS: "console" , SLACK_BOT_TOKEN: "xoxb-1-2-abc" } }))).toEqual(["console"]);
  });

  it("says which file is missing or broken", () => {
    const cwd = dir();
    expect(() => loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "nope.json" } })).toThrow(/file not found/);
    writeFileSync(path.join(cwd, "bad.json"), "{ model: ");
    expect(() => loadConfig({ cwd, env: { GATEHOUSE_CONFIG: "bad.json" } })).toThrow(/not valid JSON/);
  });
});
