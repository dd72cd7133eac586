import { afterEach, describe, expect, it } from "vitest";
import { policyChanges } from "../../src/approval/decision-log-policy.ts";
import type { Config } from "../../src/config/schema.ts";
import { startTestBot, type TestBot } from "../support/bot.ts";
import { MemoryChannel } from "../support/memory-channel.ts";

let tb: TestBot | undefined;
afterEach(async () => {
  await tb?.close();
  tb = undefined;
});

describe("policy changes at start", () => {
  it("logs the first start's policy, a widening with what widened, and nothing for a start with the same policy", async () => {
    let edit: (config: Config) => void = () => {};
    tb = await startTestBot({ adapters: [new MemoryChannel()], configure: (config) => edit(config) });
    const changes = async () => (await tb!.bot.store.listAudit({ kind: "policy.changed" })).map((e) => [e.outcome, e.detail]);
    expect(await changes()).toEqual([["recorded", "no earlier policy on record: this start's policy is the baseline"]]);

    await tb.restart();
    expect(await changes()).toHaveLength(1);

    edit = (config) => {
      config.approval.autonomy = "full";
      config.approval.autoApprove.push("shell");
      config.approval.approvers.slack = ["UADMIN"];
    };
    await tb.restart();
    expect((await changes())[1]).toEqual([
      "widened",
      'widened: approval.autonomy raised from supervised to full; approval.autoApprove gained "shell"; approvers added on slack: UADMIN',
    ]);
    expect(tb.logLines.some((line) => line.includes("the approval policy widened since the last start"))).toBe(true);

    edit = (config) => {
      config.approval.autonomy = "full";
      config.approval.autoApprove.push("shell");
      config.approval.approvers.slack = ["UADMIN"];
      config.approval.alwaysAsk = ["write_file"];
    };
    await tb.restart();
    expect((await changes())[2]).toEqual(["narrowed", 'narrowed: approval.alwaysAsk gained "write_file"']);
    const [entry] = (await tb.bot.store.readAuditLog()).filter((e) => e.kind === "policy.changed").slice(-1);
    expect(entry).toMatchObject({ source: "config", reason: expect.stringMatching(/^policy [0-9a-f]{64}, was [0-9a-f]{64}$/), seq: expect.any(Number) });
  });
});

describe("what a policy change widened", () => {
  const base = {
    approval: { autonomy: "supervised", alwaysAsk: ["shell"], autoApprove: ["read_file"], approvers: {}, alwaysScope: "session", alwaysCoversOthers: false, rules: [], timeoutMs: 300_000 },
    tools: { profile: "standard", allow: [], deny: ["http_fetch"], bySender: {}, byConversation: {}, elevated: { enabled: true, allowFrom: ["console:*"] } },
    hooks: [{ type: "block", tools: ["shell"], reason: "no", priority: 0 }],
    mcpRisk: {},
    shell: { allowUnsandboxed: false },
  };
  const edited = (change: (p: typeof base) => void) => {
    const copy = structuredClone(base);
    change(copy);
    return copy;
  };

  it("names lost alwaysAsk and deny patterns, removed hooks, elevation and scope as widening", () => {
    const after = edited((p) => {
      p.approval.alwaysAsk = [];
      p.approval.alwaysScope = "sender";
      p.tools.deny = [];
      p.tools.elevated.allowFrom.push("slack:*");
      p.hooks = [];
      p.shell.allowUnsandboxed = true;
    });
    expect(policyChanges(base, after).widened).toEqual([
      'approval.alwaysAsk lost "shell"',
      "approval.alwaysScope widened from session to sender",
      'tools.deny lost "http_fetch"',
      'tools.elevated.allowFrom gained "slack:*"',
      "1 hook removed or changed",
      "shell.allowUnsandboxed turned on",
    ]);
  });

  it("says that approver rules and timeouts changed without calling it a widening", () => {
    const after = edited((p) => {
      p.approval.rules = [{ tools: ["shell"], approvers: { users: ["U1"] } }] as never;
      p.approval.timeoutMs = 60_000;
    });
    expect(policyChanges(base, after)).toEqual({
      widened: [], narrowed: [], changed: ["approval.rules changed (0 → 1 rules)", "approval.timeoutMs changed"],
    });
  });
});
