/**
 * What an MCP server asks of a turn while its tool runs, through the engine against real servers
 * (server-everything over stdio, and the fixture server for a request the bot did not offer):
 * elicitation declined where no one can be asked, held timeouts and /stop while a person answers;
 * sampling off, on with autoApprove, and on with a person who says no.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { engineFixture, lastToolResult, type EngineFixture } from "../engine/fixture.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { McpHub } from "../../src/tools/mcp/hub.ts";
import { consoleQuestioner } from "../../src/approval/console-questions.ts";
import { FIXTURE_SERVER, mcpConfig } from "./helpers.ts";

const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
const EVERYTHING_BIN = join(dirname(packageJson), "dist", "index.js");
const WORKSPACE = join(tmpdir(), "gatehouse-everything-workspace");

const hubs: McpHub[] = [];
let fx: EngineFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});
afterAll(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

async function everything(extra: Record<string, unknown> = {}): Promise<McpHub> {
  const hub = new McpHub(mcpConfig({ servers: { every: { command: process.execPath, args: [EVERYTHING_BIN, "stdio"], ...extra } } }), silentLogger(), { workspace: WORKSPACE });
  hubs.push(hub);
  await hub.start();
  expect(hub.status()[0]).toMatchObject({ state: "connected" });
  return hub;
}

/** Terminal prompts, answered from a script; records what was asked. */
function terminal(answer: (question: string, signal: AbortSignal) => Promise<string> | string) {
  const asked: string[] = [];
  const questioner = consoleQuestioner(async (question, signal) => {
    asked.push(question);
    return answer(question, signal);
  });
  return { asked, questioner };
}

const ELICIT = { name: "every__trigger-elicitation-request", arguments: "{}" };

describe("an MCP server's question during a turn", () => {
  let hub: McpHub;
  beforeAll(async () => {
    hub = await everything({ readOnlyTools: ["trigger-elicitation-request"], timeoutMs: 1_000 });
  });

  it("is declined where no one can be asked, and the thread is told", async () => {
    fx = await engineFixture({ tools: hub.tools() });
    fx.emu.script({ toolCalls: [ELICIT] }, { text: "could not ask" });
    const { outcome, turnEvents } = await fx.turn("sign me up");
    expect(outcome.text).toBe("could not ask");
    expect(lastToolResult(fx.emu, 1)).toContain("❌ User declined to provide the requested information.");
    expect(turnEvents).toContainEqual({
      type: "notice",
      text: '❓ MCP server "every" asked a question during every__trigger-elicitation-request; it was declined: this channel cannot ask questions.',
    });
    expect(await fx.store.listAudit({ kind: "question.declined" })).toHaveLength(1);
  });

  it("is declined on a scheduled task, without asking the console", async () => {
    fx = await engineFixture({ tools: hub.tools() });
    const { asked, questioner } = terminal(() => "decline");
    fx.exec.questions = questioner;
    fx.emu.script({ toolCalls: [ELICIT] }, { text: "nobody to ask" });
    const { turnEvents } = await fx.turn("nightly sign-up", { origin: { kind: "schedule", name: "nightly" } });
    expect(asked).toEqual([]);
    expect(lastToolResult(fx.emu, 1)).toContain("User declined");
    expect(turnEvents.find((e) => e.type === "notice")).toMatchObject({ text: expect.stringContaining('declined: nobody watches the scheduled task "nightly"') });
  });

  it("holds the call's timeout while the person is answering", async () => {
    fx = await engineFixture({ tools: hub.tools() });
    // The server's timeout is 1 s; the person takes longer over the first field, then declines.
    const { asked, questioner } = terminal(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      return "decline";
    });
    fx.exec.questions = questioner;
    fx.emu.script({ toolCalls: [ELICIT] }, { text: "declined" });
    await fx.turn("sign me up");
    expect(asked).toHaveLength(1);
    const result = lastToolResult(fx.emu, 1);
    expect(result).not.toMatch(/timed out/);
    expect(result).toContain("User declined");
  });

  it("ends the question when the turn is stopped", async () => {
    fx = await engineFixture({ tools: hub.tools() });
    const stop = new AbortController();
    let questionSignal: AbortSignal | undefined;
    const { questioner } = terminal((_question, signal) => {
      questionSignal = signal;
      setTimeout(() => stop.abort(), 50);
      return new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    });
    fx.exec.questions = questioner;
    fx.emu.script({ toolCalls: [ELICIT] });
    const { outcome } = await fx.turn("sign me up", { signal: stop.signal });
    expect(outcome.status).toBe("cancelled");
    expect(questionSignal?.aborted).toBe(true);
    const answered = await fx.store.listAudit({ kind: "question.answered" });
    expect(answered[0]).toMatchObject({ outcome: "cancel", detail: "the request was stopped" });
  });
});

describe("MCP sampling", () => {
  it("is not offered while off: the server gets an error and the turn goes on", async () => {
    const off = await everything();
    expect(off.tools().map((t) => t.name)).not.toContain("every__trigger-sampling-request");
    const fixture = new McpHub(mcpConfig({ servers: { fx: { command: process.execPath, args: [FIXTURE_SERVER], readOnlyTools: ["sample"] } } }), silentLogger());
    hubs.push(fixture);
    await fixture.start();
    fx = await engineFixture({ tools: fixture.tools() });
    fx.emu.script({ toolCalls: [{ name: "fx__sample", arguments: '{"prompt":"hello"}' }] }, { text: "it could not sample" });
    const { outcome } = await fx.turn("try sampling");
    expect(outcome).toMatchObject({ status: "done", text: "it could not sample" });
    expect(lastToolResult(fx.emu, 1)).toBe("sampling failed: MCP error -32601: sampling is off for MCP server fx in Gatehouse (mcp.servers.fx.sampling.enabled)");
    expect(fx.emu.requests).toHaveLength(2);
  });

  describe("when enabled", () => {
    let hub: McpHub;
    beforeAll(async () => {
      hub = await everything({ readOnlyTools: ["trigger-sampling-request"], sampling: { enabled: true, maxTokens: 40 } });
    });
    const SAMPLE = { name: "every__trigger-sampling-request", arguments: '{"prompt":"write a haiku about ponds","maxTokens":100}' };

    it("runs one tool-less model request under autoApprove and hands the answer to the server", async () => {
      fx = await engineFixture({ tools: hub.tools(), approval: { autoApprove: ["mcp__every__sampling"] } });
      fx.emu.script({ toolCalls: [SAMPLE] }, { text: "An old silent pond" }, { text: "Here is your haiku." });
      const { outcome } = await fx.turn("sample something");
      expect(outcome.text).toBe("Here is your haiku.");
      const sampling = fx.emu.requests[1]!.body as { max_tokens?: number; tools?: unknown; messages: Array<{ role: string; content: string }> };
      expect(sampling.max_tokens).toBe(40);
      expect(sampling.tools).toBeUndefined();
      expect(sampling.messages).toEqual([
        { role: "system", content: "You are a helpful test server." },
        { role: "user", content: "Resource trigger-sampling-request context: write a haiku about ponds" },
      ]);
      expect(lastToolResult(fx.emu, 2)).toContain('"text": "An old silent pond"');
      const [entry] = await fx.store.listAudit({ kind: "mcp.sampling" });
      expect(entry).toMatchObject({ tool: "mcp__every__sampling", outcome: "answered", actorId: "U1" });
      expect(entry!.detail).toContain("maxTokens 40 (asked 100)");
      expect(fx.logLines.join("\n")).not.toContain("haiku");
    });

    it("asks the person where approval is needed, and runs no model request when they say no", async () => {
      fx = await engineFixture({ tools: hub.tools() });
      const { asked, questioner } = terminal(() => "no");
      fx.exec.questions = questioner;
      fx.emu.script({ toolCalls: [SAMPLE] }, { text: "It was not allowed." });
      const { outcome } = await fx.turn("sample something");
      expect(outcome.text).toBe("It was not allowed.");
      expect(fx.emu.requests).toHaveLength(2);
      expect(asked[0]).toContain('MCP server "every" asks to use the model for an answer of at most 40 tokens, from 1 message:');
      expect(asked[0]).toContain('- user: "Resource trigger-sampling-request context: write a haiku about ponds"');
      expect(asked[0]).toContain("Allow mcp__every__sampling? (required)");
      expect(lastToolResult(fx.emu, 1)).toContain("the sampling request was refused: denied by Ann (U1)");
      const decided = await fx.store.listAudit({ kind: "action.decided" });
      expect(decided[0]).toMatchObject({ tool: "mcp__every__sampling", outcome: "denied", source: "question" });
    });

    it("is refused without asking when the policy denies it", async () => {
      fx = await engineFixture({ tools: hub.tools(), policy: { deny: ["mcp__*__sampling"] } });
      const { asked, questioner } = terminal(() => "yes");
      fx.exec.questions = questioner;
      fx.emu.script({ toolCalls: [SAMPLE] }, { text: "Denied by policy." });
      await fx.turn("sample something");
      expect(asked).toEqual([]);
      expect(fx.emu.requests).toHaveLength(2);
      expect(lastToolResult(fx.emu, 1)).toContain('refused by policy (tools.deny "mcp__*__sampling")');
    });
  });
});
