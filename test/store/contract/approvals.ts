/** Contract: pending approvals and their compare-and-set. */
import { describe, expect, it } from "vitest";
import type { PendingApprovalRecord } from "../../../src/store/store.ts";
import { openFresh, type StoreHarness } from "./harness.ts";

/** A pending approval as the approval service creates it. */
export function pending(id: string, overrides: Partial<PendingApprovalRecord> = {}): PendingApprovalRecord {
  return {
    id,
    sessionKey: "slack:C1:171.2",
    turnId: "turn-1",
    callId: "call-1",
    tool: "shell",
    argsHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    argsSummary: "rm -rf build/",
    channel: "slack",
    requesterId: "U1",
    approvers: ["U1", "UADMIN"],
    target: { channel: "slack", conversationId: "C1", threadId: "171.2" },
    createdAt: 1_000,
    expiresAt: 61_000,
    state: "pending",
    ...overrides,
  };
}

/** Approval behaviours every store must have. */
export function describeApprovalsContract(harness: StoreHarness): void {
  describe("pending approvals", () => {
    it("stores and returns every field of an approval", async () => {
      const store = await openFresh(harness);
      const full = pending("a1", {
        requesterName: "Ana",
        cardMessageId: "171.3",
        target: { channel: "slack", account: "team2", conversationId: "C1", threadId: "171.2", replyToMessageId: "171.2" },
        allowAlways: false,
        createdAt: 1_700_000_000_000,
        expiresAt: 1_700_000_060_000,
      });
      await store.createApproval(full);
      await store.createApproval(pending("a2"));
      expect(await store.getApproval("a1")).toEqual(full);
      expect(await store.getApproval("a2")).toEqual(pending("a2"));
      expect(await store.getApproval("nope")).toBeUndefined();
      await store.close();
    });

    it("remembers the card's message id once it is posted", async () => {
      const store = await openFresh(harness);
      await store.createApproval(pending("a1"));
      await store.setApprovalCardMessage("a1", "msg-99");
      expect((await store.getApproval("a1"))?.cardMessageId).toBe("msg-99");
      await store.close();
    });

    it("keeps the approver rule an approval was asked under", async () => {
      const store = await openFresh(harness);
      const ruled = pending("a1", {
        approvers: ["UOPS"],
        approverRule: {
          name: "kubectl changes", groups: ["S0SRE"], roles: [], chatAdmins: true, quorum: 2,
          askedIn: { channel: "slack", conversationId: "C1", threadId: "171.2" }, routeLabel: "#ops", askedInLink: "https://example.slack.com/archives/C1/p1712",
        },
      });
      await store.createApproval(ruled);
      expect(await store.getApproval("a1")).toEqual(ruled);
      await store.close();
    });

    it("counts each person's approval towards a quorum once, and none after the decision", async () => {
      const store = await openFresh(harness);
      await store.createApproval(pending("a1"));
      const first = await store.addApprovalVote("a1", { voterId: "U2", voterName: "Bo", at: 2_000 });
      expect(first).toEqual({ added: true, votes: [{ voterId: "U2", voterName: "Bo", at: 2_000 }] });
      const twice = await Promise.all([
        store.addApprovalVote("a1", { voterId: "U3", at: 3_000 }),
        store.addApprovalVote("a1", { voterId: "U3", at: 3_000 }),
      ]);
      expect(twice.map((t) => t.added).sort()).toEqual([false, true]);
      expect((await store.addApprovalVote("a1", { voterId: "U2", at: 4_000 })).votes.map((v) => v.voterId)).toEqual(["U2", "U3"]);
      await store.decideApproval("a1", "approved", { id: "U3" }, 5_000);
      expect(await store.addApprovalVote("a1", { voterId: "U4", at: 6_000 })).toMatchObject({ added: false });
      expect(await store.addApprovalVote("nope", { voterId: "U4", at: 6_000 })).toEqual({ added: false, votes: [] });
      await store.close();
    });

    it("accepts exactly one of two simultaneous clicks", async () => {
      const store = await openFresh(harness);
      await store.createApproval(pending("a1"));
      const results = await Promise.all([
        store.decideApproval("a1", "approved", { id: "U1", name: "Ana" }, 2_000),
        store.decideApproval("a1", "denied", { id: "UADMIN", name: "Bo" }, 2_000),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const decided = await store.getApproval("a1");
      const winner = results[0] ? { state: "approved", decidedById: "U1", decidedByName: "Ana" } : { state: "denied", decidedById: "UADMIN", decidedByName: "Bo" };
      expect(decided).toMatchObject({ ...winner, decidedAt: 2_000 });
      await store.close();
    });

    it("refuses a click after the approval expired, but lets the timeout mark it expired", async () => {
      const store = await openFresh(harness);
      await store.createApproval(pending("a1", { expiresAt: 5_000 }));
      expect(await store.decideApproval("a1", "approved", { id: "U1" }, 5_000)).toBe(false);
      expect((await store.getApproval("a1"))?.state).toBe("pending");
      expect(await store.decideApproval("a1", "expired", {}, 5_001)).toBe(true);
      expect(await store.getApproval("a1")).toMatchObject({ state: "expired", decidedAt: 5_001 });
      expect(await store.decideApproval("a1", "approved", { id: "U1" }, 5_002)).toBe(false);
      await store.close();
    });

    it("keeps the reason given with a denial, across a restart, and none from a click that lost", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.createApproval(pending("a1"));
      await before.createApproval(pending("a2"));
      expect(await before.decideApproval("a1", "denied", { id: "U1", name: "Ana" }, 2_000, "not on a Friday")).toBe(true);
      expect(await before.decideApproval("a2", "approved", { id: "U1" }, 2_000)).toBe(true);
      expect(await before.decideApproval("a2", "denied", { id: "UADMIN" }, 2_001, "too late")).toBe(false);
      await before.close();

      const store = await harness.open(location);
      expect(await store.getApproval("a1")).toMatchObject({ state: "denied", decidedById: "U1", decisionReason: "not on a Friday" });
      const a2 = await store.getApproval("a2");
      expect(a2).toMatchObject({ state: "approved", decidedById: "U1" });
      expect(a2).not.toHaveProperty("decisionReason");
      expect((await store.listApprovals("denied")).map((a) => a.decisionReason)).toEqual(["not on a Friday"]);
      await store.close();
    });

    it("refuses a decision on an unknown approval", async () => {
      const store = await openFresh(harness);
      expect(await store.decideApproval("ghost", "approved", { id: "U1" }, 1)).toBe(false);
      await store.close();
    });
  });

  describe("remembered 'always' decisions", () => {
    it("apply only to the scope and tool they were given for, and survive a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.rememberAlways("slack:C1", "shell", 1_000);
      await before.rememberAlways("slack:C1", "shell", 2_000);
      await before.close();

      const store = await harness.open(location);
      expect(await store.hasAlways("slack:C1", "shell")).toBe(true);
      expect(await store.hasAlways("slack:C2", "shell")).toBe(false);
      expect(await store.hasAlways("slack:C1", "write_file")).toBe(false);
      await store.close();
    });

    it("are listed by scope and then tool, byte for byte, each with when it was first given", async () => {
      const store = await openFresh(harness);
      expect(await store.listAlwaysRules()).toEqual([]);
      await store.rememberAlways("slack:C1", "shell", 1_700_000_000_000);
      await store.rememberAlways("slack:C1", "shell", 1_700_000_009_000);
      await store.rememberAlways("slack:C1", "http", 2);
      await store.rememberAlways("Slack:C1", "shell", 3);
      await store.rememberAlways("discord:9", "write_file", 4);
      await store.forgetAlways("discord:9");
      expect((await store.listAlwaysRules()).map(({ scope, tool, createdAt }) => ({ scope, tool, createdAt }))).toEqual([
        { scope: "Slack:C1", tool: "shell", createdAt: 3 },
        { scope: "slack:C1", tool: "http", createdAt: 2 },
        { scope: "slack:C1", tool: "shell", createdAt: 1_700_000_000_000 },
      ]);
      await store.close();
    });

    it("are forgotten for a whole scope, and only that scope", async () => {
      const store = await openFresh(harness);
      await store.rememberAlways("slack:C1", "shell", 1);
      await store.rememberAlways("slack:C1", "http", 1);
      await store.rememberAlways("slack:C2", "shell", 1);
      await store.rememberAlways("slack:C1|sender:slack:U1", "shell", 1);
      await store.rememberAlways("slack:C10|sender:slack:U1", "shell", 1);
      await store.forgetAlways("slack:C1");
      expect(await store.hasAlways("slack:C1", "shell")).toBe(false);
      expect(await store.hasAlways("slack:C1", "http")).toBe(false);
      expect(await store.hasAlways("slack:C1|sender:slack:U1", "shell")).toBe(false);
      expect(await store.hasAlways("slack:C10|sender:slack:U1", "shell")).toBe(true);
      expect(await store.hasAlways("slack:C2", "shell")).toBe(true);
      await store.close();
    });
  });
}
