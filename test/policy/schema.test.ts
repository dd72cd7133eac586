import { describe, expect, it } from "vitest";
import {
  ApprovalConfigSchema,
  HookConfigSchema,
  LoopConfigSchema,
  ReceiptsConfigSchema,
  ToolPolicyConfigSchema,
} from "../../src/policy/schema.ts";

describe("policy config schemas", () => {
  it("gives safe defaults for an empty config", () => {
    const tools = ToolPolicyConfigSchema.parse({});
    expect(tools.profile).toBe("standard");
    expect(tools.elevated).toEqual({ enabled: true, allowFrom: ["console:*"] });
    const approval = ApprovalConfigSchema.parse({});
    expect(approval.autonomy).toBe("supervised");
    expect(approval.autoApprove).toEqual(["current_time", "list_files", "read_file", "tool_search"]);
    expect(approval.timeoutMs).toBe(300_000);
    expect(ReceiptsConfigSchema.parse({})).toEqual({ enabled: false, show: false });
    expect(LoopConfigSchema.parse({})).toEqual({ warnAt: 3, blockAt: 4, abortAt: 6, ignoredTools: [] });
    expect(HookConfigSchema.parse(undefined)).toEqual([]);
  });

  it("rejects a misspelled key instead of ignoring it", () => {
    expect(ToolPolicyConfigSchema.safeParse({ denny: ["shell"] }).success).toBe(false);
    expect(ToolPolicyConfigSchema.safeParse({ bySender: { "slack:U1": { alow: ["x"] } } }).success).toBe(false);
    expect(ToolPolicyConfigSchema.safeParse({ profile: "everything" }).success).toBe(false);
  });

  it("rejects loop thresholds out of order", () => {
    expect(LoopConfigSchema.safeParse({ warnAt: 5, blockAt: 4 }).success).toBe(false);
  });

  it("rejects a config hook whose match is not a regular expression", () => {
    const result = HookConfigSchema.safeParse([{ type: "block", tools: ["shell"], match: "(", reason: "no" }]);
    expect(result.success).toBe(false);
  });

  it("rejects a receipt key too short to be a secret", () => {
    expect(ReceiptsConfigSchema.safeParse({ key: "short" }).success).toBe(false);
  });
});
