import { afterEach, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { engineFixture, lastToolResult, probeTool, toolMessages, type EngineFixture } from "./fixture.ts";
import { createNonInteractiveApprovals } from "../../src/approval/non-interactive.ts";
import { formatReceipt, loadOrCreateReceiptKey, parseReceipt, signReceipt, verifyReceipt } from "../../src/observe/receipts.ts";
import { progressLine } from "../../src/observe/progress.ts";
import { createReceiptSigner } from "../../src/observe/receipt-signer.ts";
import { loadConfig } from "../../src/config/load.ts";

let fx: EngineFixture;
afterEach(async () => fx?.close());

const writeCall = (file = "a.txt", content = "hi", extra = "") => ({
  name: "write_file",
  arguments: `{"path":"${file}","content":"${content}"${extra}}`,
});

describe("the approval gate", () => {
  it("runs a prompt-required call once a person approves, with exactly the arguments shown", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["approved"];
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "written" });
    const { turnEvents } = await fx.turn("write a file");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(fx.approvals.requests[0]!.args).toMatchObject({ path: "a.txt", content: "hi" });
    expect(fx.approvals.requests[0]!.argsSummary).toContain('"path":"a.txt"');
    expect(readFileSync(path.join(fx.exec.knobs.workspace, "a.txt"), "utf8")).toBe("hi");
    expect(turnEvents.map((e) => e.type)).toEqual(expect.arrayContaining(["approval.waiting", "tool.start", "tool.finish"]));
  });

  it("says who denied a call, and does not run it", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["denied"];
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write a file");
    expect(lastToolResult(fx.emu, 1)).toBe("write_file was not run: denied by Boss (U-boss).");
  });

  it("tells the model a timed-out approval apart from a denial", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["timeout"];
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write a file");
    expect(lastToolResult(fx.emu, 1)).toMatch(/timed out waiting for approval/);
  });

  it("denies by itself where the channel cannot ask, and says so", async () => {
    fx = await engineFixture();
    fx.exec.approvals = createNonInteractiveApprovals();
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write a file");
    expect(lastToolResult(fx.emu, 1)).toMatch(/denied: no approval channel here/);
  });

  it("ignores an approved flag the model put in the arguments", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["denied"];
    fx.emu.script({ toolCalls: [writeCall("a.txt", "hi", ',"approved":true')] }, { text: "ok" });
    await fx.turn("write");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(fx.approvals.requests[0]!.args).not.toHaveProperty("approved");
    expect(lastToolResult(fx.emu, 1)).toMatch(/denied by/);
  });

  it("ends the turn when the model asks again for a call that was not approved", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["denied", "approved"];
    fx.emu.script({ toolCalls: [writeCall()] }, { toolCalls: [writeCall()] }, { text: "never reached" });
    const { outcome } = await fx.turn("write");
    expect(outcome.status).toBe("stopped");
    expect(outcome.text).toMatch(/asked again to run write_file with the same arguments/);
    expect(fx.approvals.requests).toHaveLength(1);
    expect(fx.emu.requests).toHaveLength(2);
  });

  it("runs identical calls in one batch once", async () => {
    const probe = probeTool("dup_probe");
    fx = await engineFixture({ tools: [probe.tool], policy: { profile: "full" } });
    fx.emu.script(
      { toolCalls: [{ id: "x1", name: "dup_probe", arguments: '{"value":"1"}' }, { id: "x2", name: "dup_probe", arguments: '{"value":"1"}' }] },
      { text: "ok" },
    );
    await fx.turn("go");
    expect(probe.calls).toHaveLength(1);
    const results = toolMessages(fx.emu.requests[1]!.body);
    expect(results[1]!.content).toMatch(/duplicate of call x1 in the same batch/);
  });

  it("remembers Always for the tool in that conversation, persisted", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["always"];
    fx.emu.script({ toolCalls: [writeCall("a.txt")] }, { text: "ok" }, { toolCalls: [writeCall("b.txt")] }, { text: "ok" });
    await fx.turn("write a");
    await fx.turn("write b");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(await fx.store.hasAlways("session:console:c1|sender:console:U1", "write_file")).toBe(true);
  });

  it("never lets a remembered Always outrank alwaysAsk", async () => {
    fx = await engineFixture({ approval: { alwaysAsk: ["write_file"] } });
    await fx.store.rememberAlways("session:console:c1|sender:console:U1", "write_file", Date.now());
    fx.approvals.answers = ["denied"];
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write");
    expect(fx.approvals.requests).toHaveLength(1);
  });

  it("does not remember Always for a tool that always asks", async () => {
    fx = await engineFixture({ approval: { alwaysAsk: ["write_file"] } });
    fx.approvals.answers = ["always", "denied"];
    fx.emu.script({ toolCalls: [writeCall("a.txt")] }, { text: "ok" }, { toolCalls: [writeCall("b.txt")] }, { text: "ok" });
    await fx.turn("write a");
    await fx.turn("write b");
    expect(fx.approvals.requests).toHaveLength(2);
    expect(fx.approvals.requests[0]!.allowAlways).toBe(false);
  });

  it("writes every approval request and decision to the audit log", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["denied"];
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write");
    const rows = await fx.store.listAudit();
    expect(rows.map((r) => r.kind)).toEqual(["approval.requested", "approval.decided"]);
    expect(rows[1]).toMatchObject({ tool: "write_file", outcome: "denied", actorId: "U-boss", source: "console" });
    expect(rows[1]!.argsHash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("policy and hooks in the gate", () => {
  it("refuses a denied tool the model calls anyway, before any hook runs, naming the rule", async () => {
    fx = await engineFixture({ policy: { deny: ["write_file"] } });
    let hookRan = false;
    fx.hooks.onBeforeToolCall("spy", () => {
      hookRan = true;
    });
    fx.emu.script({ toolCalls: [writeCall()] }, { text: "ok" });
    await fx.turn("write");
    expect(fx.emu.requests[0]!.body.tools as Array<{ function: { name: string } }>).not.toContainEqual(
      expect.objectContaining({ function: expect.objectContaining({ name: "write_file" }) }),
    );
    expect(lastToolResult(fx.emu, 1)).toBe('write_file was not run: refused by policy (tools.deny "write_file").');
    expect(hookRan).toBe(false);
    expect((await fx.store.listAudit({ kind: "policy.refused" }))[0]).toMatchObject({ tool: "write_file", detail: 'tools.deny "write_file"' });
  });

  it("does not offer shell to a platform sender who is not elevated", async () => {
    fx = await engineFixture();
    fx.emu.script({ toolCalls: [{ name: "shell", arguments: '{"command":"id"}' }] }, { text: "ok" });
    await fx.turn("run id", { channel: "slack", sender: "U9" });
    expect(lastToolResult(fx.emu, 1)).toMatch(/refused by policy \(tools\.elevated\.allowFrom/);
  });

  it("reports a hook's block with the hook's name and reason", async () => {
    fx = await engineFixture();
    fx.hooks.onBeforeToolCall("no-secrets-folder", (call) => (String(call.params.path).startsWith("secrets/") ? { block: true, reason: "that folder is off limits" } : undefined));
    fx.emu.script({ toolCalls: [{ name: "read_file", arguments: '{"path":"secrets/x"}' }] }, { text: "ok" });
    await fx.turn("read");
    expect(lastToolResult(fx.emu, 1)).toBe('read_file was not run: blocked by hook "no-secrets-folder": that folder is off limits');
  });

  it("asks a person when a hook requires approval, even for a read tool", async () => {
    fx = await engineFixture();
    fx.hooks.onBeforeToolCall("ask-for-etc", () => ({ requireApproval: true }));
    fx.approvals.answers = ["approved"];
    fx.emu.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "ok" });
    await fx.turn("time");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(lastToolResult(fx.emu, 1)).toMatch(/\d{4}-/);
  });
});

describe("loop detection in a turn", () => {
  it("warns the model, then blocks, then ends the turn with a clear message", async () => {
    const probe = probeTool("loop_probe");
    fx = await engineFixture({ tools: [probe.tool], policy: { profile: "full" }, loop: { warnAt: 2, blockAt: 3, abortAt: 4 } });
    const same = { toolCalls: [{ name: "loop_probe", arguments: '{"value":"same"}' }] };
    fx.emu.script(same, same, same, same, { text: "never" });
    const { outcome } = await fx.turn("go");
    expect(lastToolResult(fx.emu, 2)).toMatch(/\[note: .*Change your approach/);
    expect(lastToolResult(fx.emu, 3)).toMatch(/blocked by the loop detector/);
    expect(outcome.status).toBe("stopped");
    expect(outcome.text).toMatch(/I stopped this task/);
    expect(probe.calls).toHaveLength(2);
  });
});

describe("receipts", () => {
  it("signs a successful execution with a receipt that verifies, and fails after any change", async () => {
    fx = await engineFixture();
    const key = loadOrCreateReceiptKey(fx.dir);
    const issued: Array<{ id: string; tool: string; args: Record<string, unknown>; output: string }> = [];
    fx.exec.receipts = {
      show: true,
      sign(input) {
        const at = Date.now();
        const signed = signReceipt(key, { ...input, at });
        const id = formatReceipt(signed);
        issued.push({ id, ...input });
        return { id, at, sessionKey: input.sessionKey, callId: input.callId, tool: input.tool, argsCanonical: signed.argsCanonical, outputHash: signed.outputHash, mac: signed.mac };
      },
    };
    fx.approvals.answers = ["approved", "denied"];
    fx.emu.script({ toolCalls: [writeCall("r.txt", "data"), writeCall("s.txt", "data")] }, { text: "ok" });
    const { turnEvents } = await fx.turn("write");
    expect(issued).toHaveLength(1); // the denied call gets none
    const r = issued[0]!;
    expect(r.args).toMatchObject({ path: "r.txt", approved: "approved-by-person" });
    const receipt = parseReceipt(r.id);
    expect(verifyReceipt(key, receipt, { tool: r.tool, args: r.args, output: r.output })).toBe(true);
    expect(verifyReceipt(key, receipt, { tool: "shell", args: r.args, output: r.output })).toBe(false);
    expect(verifyReceipt(key, receipt, { tool: r.tool, args: { ...r.args, path: "x" }, output: r.output })).toBe(false);
    expect(verifyReceipt(key, receipt, { tool: r.tool, args: r.args, output: `${r.output}!` })).toBe(false);
    expect(verifyReceipt(key, { ...receipt, at: receipt.at + 1 }, { tool: r.tool, args: r.args, output: r.output })).toBe(false);
    const finish = turnEvents.find((e) => e.type === "tool.finish");
    expect(progressLine(finish!)).toContain(`receipt ${r.id}`);
  });
});

describe("when receipts are stored", () => {
  it("has a read's receipt stored by the turn's next checkpoint, and another tool's by the checkpoint that records its result", async () => {
    // A tool that is not replayable (so the turn saves before it runs and after its result) and
    // reports which receipts the store holds when it runs.
    let fixture: EngineFixture | undefined;
    const counter = {
      name: "count_receipts", description: "Counts the stored receipts.", parameters: z.looseObject({}), risk: "read" as const, owner: "builtin" as const,
      async execute() {
        return { success: true, output: (await fixture!.store.listReceipts()).map((r) => r.tool).join(",") || "none" };
      },
    };
    fx = fixture = await engineFixture({ tools: [counter], policy: { profile: "full" } });
    const key = loadOrCreateReceiptKey(fx.dir);
    // Each signing a later millisecond, as the bot's signer does: the store lists receipts by time.
    let last = 0;
    fx.exec.receipts = {
      show: false,
      sign(input) {
        const at = (last = Math.max(Date.now(), last + 1));
        const signed = signReceipt(key, { ...input, at });
        return { id: formatReceipt(signed), at, sessionKey: input.sessionKey, callId: input.callId, tool: input.tool, argsCanonical: signed.argsCanonical, outputHash: signed.outputHash, mac: signed.mac };
      },
    };
    fx.emu.script(
      { toolCalls: [{ name: "current_time", arguments: "{}" }] },
      { toolCalls: [{ name: "count_receipts", arguments: "{}" }] },
      { toolCalls: [{ name: "count_receipts", arguments: "{}" }] },
      { toolCalls: [{ name: "current_time", arguments: "{}" }] },
      { text: "counted" },
    );
    const { outcome } = await fx.turn("count them");
    expect(outcome.text).toBe("counted");
    // The first count runs after the checkpoint before it, which took the read's receipt along.
    expect(lastToolResult(fx.emu, 2)).toBe("current_time");
    expect(lastToolResult(fx.emu, 3)).toBe("current_time,count_receipts");
    // The last read's receipt went with the turn's end.
    expect((await fx.store.listReceipts()).map((r) => r.tool).sort()).toEqual(["count_receipts", "count_receipts", "current_time", "current_time"]);
  });
});

describe("receipts not shown in the chat", () => {
  it("names each call's receipt in the log when it is signed, as stored", async () => {
    fx = await engineFixture();
    const config = loadConfig({ cwd: fx.dir, env: { GATEHOUSE_DATA_DIR: "data" } });
    fx.exec.receipts = createReceiptSigner(config);
    fx.emu.script({ toolCalls: [{ name: "current_time", arguments: "{}" }, { name: "current_time", arguments: '{"timezone":"Asia/Tokyo"}' }] }, { text: "two times" });
    await fx.turn("what time is it here and in Tokyo");
    const stored = await fx.store.listReceipts();
    expect(stored).toHaveLength(2);
    const logged = fx.logLines.map((l) => JSON.parse(l) as { event?: string; receipts?: Array<{ callId: string; receipt: string }> }).filter((l) => l.event === "receipts.signed");
    expect(logged.flatMap((l) => l.receipts!).map((r) => [r.callId, r.receipt]).sort()).toEqual(stored.map((r) => [r.callId, r.id]).sort());
  });
});

describe("receipts of identical executions", () => {
  afterEach(() => vi.useRealTimers());

  it("answers two conversations whose same read gave the same output in the same millisecond, each with its own receipt", async () => {
    const read = probeTool("same_read", { output: () => "42 items" });
    fx = await engineFixture({ tools: [read.tool], policy: { profile: "full" } });
    const config = loadConfig({ cwd: fx.dir, env: { GATEHOUSE_DATA_DIR: "data" } });
    fx.exec.receipts = createReceiptSigner(config);
    // The clock stands still: both executions and their signing happen "at once", as under load.
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-12-01T10:00:00Z") });
    for (const channel of ["slack", "telegram"]) {
      fx.emu.script({ toolCalls: [{ name: "same_read", arguments: '{"value":"x"}' }] }, { text: `counted in ${channel}` });
      const { outcome } = await fx.turn("count them", { channel });
      expect(outcome.status).toBe("done");
      expect(outcome.text).toBe(`counted in ${channel}`);
    }
    const receipts = await fx.store.listReceipts();
    expect(receipts.map((r) => r.sessionKey).sort()).toEqual(["slack:c1", "telegram:c1"]);
    expect(new Set(receipts.map((r) => r.id)).size).toBe(2);
  });
});

describe("secrets", () => {
  it("keeps a seeded secret out of progress lines and log lines", async () => {
    const secret = "sk-test-SEEDEDsecret0123456789abcdef";
    const echo = probeTool("echo_probe", { output: (a) => `value was ${String(a.value)}` });
    fx = await engineFixture({ tools: [echo.tool], policy: { profile: "full" }, apiKey: secret });
    fx.emu.script({ toolCalls: [{ name: "echo_probe", arguments: JSON.stringify({ value: `token ${secret}` }) }] }, { text: "ok" });
    const { turnEvents } = await fx.turn(`use ${secret}`);
    const lines = turnEvents.map(progressLine).filter(Boolean).join("\n");
    expect(lines).toContain("⏳ echo_probe");
    expect(lines).not.toContain(secret);
    expect(fx.logLines.length).toBeGreaterThan(3);
    expect(fx.logLines.join("")).not.toContain(secret);
  });
});

describe("asking only about calls that will run", () => {
  it("asks once about identical prompt-required calls in one batch, and runs the call once", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["approved", "approved"];
    fx.emu.script({ toolCalls: [{ id: "w1", ...writeCall("same.txt") }, { id: "w2", ...writeCall("same.txt") }] }, { text: "ok" });
    await fx.turn("write twice");
    expect(fx.approvals.requests).toHaveLength(1);
    const results = toolMessages(fx.emu.requests[1]!.body);
    expect(results[1]!.content).toMatch(/duplicate of call w1/);
  });

  it("asks once about identical calls in one batch when the answer is no, and does not end the turn", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["denied", "denied"];
    fx.emu.script({ toolCalls: [{ id: "d1", ...writeCall("no.txt") }, { id: "d2", ...writeCall("no.txt") }] }, { text: "understood" });
    const { outcome } = await fx.turn("write twice");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(outcome.text).toBe("understood");
    expect(toolMessages(fx.emu.requests[1]!.body).map((m) => m.content)).toEqual([
      "write_file was not run: denied by Boss (U-boss).",
      "write_file was not run: denied by Boss (U-boss).",
    ]);
  });

  it("does not ask about a call the loop detector blocks", async () => {
    fx = await engineFixture({ loop: { warnAt: 2, blockAt: 2, abortAt: 5 } });
    fx.approvals.answers = ["approved", "approved", "approved"];
    fx.emu.script({ toolCalls: [writeCall("l.txt")] }, { toolCalls: [writeCall("l.txt")] }, { text: "ok" });
    await fx.turn("write again and again");
    expect(fx.approvals.requests).toHaveLength(1);
    expect(lastToolResult(fx.emu, 2)).toMatch(/blocked by the loop detector/);
  });

  it("gives calls fresh ids when the server repeats call_0 in every reply", async () => {
    const probe = probeTool("id_probe", { output: (a) => `out-${String(a.value)}` });
    fx = await engineFixture({ tools: [probe.tool], policy: { profile: "full" } });
    fx.emu.script(
      { toolCalls: [{ id: "call_0", name: "id_probe", arguments: '{"value":"a"}' }] },
      { toolCalls: [{ id: "call_0", name: "id_probe", arguments: '{"value":"b"}' }] },
      { text: "ok" },
    );
    const { outcome } = await fx.turn("go");
    const ids = outcome.newMessages.filter((m) => m.role === "tool").map((m) => (m as { tool_call_id: string }).tool_call_id);
    expect(new Set(ids).size).toBe(2);
    expect(toolMessages(fx.emu.requests[2]!.body).map((m) => m.content)).toEqual(["out-a", "out-b"]);
  });
});

describe("calls that cannot run", () => {
  it("are refused before anyone is asked to approve them", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["approved"];
    fx.emu.script({ toolCalls: [writeCall("../../escape.txt")] }, { text: "ok" });
    await fx.turn("write outside");
    expect(fx.approvals.requests).toHaveLength(0);
    expect(lastToolResult(fx.emu, 1)).toMatch(/write_file was not run: invalid arguments: path escapes the workspace/);
  });
});
