/** The store contract for remembered "always" decisions: ids, expiry, listing by scope, revoking. */
import { describe, expect, it } from "vitest";
import { openFresh, type StoreHarness } from "./harness.ts";

export function describeAlwaysContract(harness: StoreHarness): void {
  describe("remembered 'always' decisions, managed", () => {
    it("give each decision a short id of its own, by which it is found again after a restart", async () => {
      const location = await harness.freshLocation();
      const before = await harness.open(location);
      await before.rememberAlways("session:slack:C1:1.2|sender:slack:U1", "shell", 1_000, { personName: "Ann" });
      await before.rememberAlways("session:slack:C1:1.2|sender:slack:U1", "http_fetch", 1_100);
      await before.close();

      const store = await harness.open(location);
      const [http, shell] = await store.listAlwaysRules();
      expect(shell!.id).toMatch(/^[A-Za-z0-9_-]{6,16}$/);
      expect(http!.id).not.toBe(shell!.id);
      expect(await store.getAlwaysRule(shell!.id)).toEqual({
        id: shell!.id, scope: "session:slack:C1:1.2|sender:slack:U1", tool: "shell", createdAt: 1_000, personName: "Ann",
      });
      expect(await store.getAlwaysRule("nosuchid")).toBeUndefined();
      await store.close();
    });

    it("stop applying once they expire, and are still listed with their expiry", async () => {
      const store = await openFresh(harness);
      await store.rememberAlways("conversation:slack:C1", "shell", 1_000, { expiresAt: 5_000 });
      expect(await store.hasAlways("conversation:slack:C1", "shell", 4_999)).toBe(true);
      expect(await store.hasAlways("conversation:slack:C1", "shell", 5_000)).toBe(false);
      expect(await store.hasAlways("conversation:slack:C1", "shell")).toBe(false);
      expect(await store.listAlwaysRules()).toEqual([expect.objectContaining({ tool: "shell", createdAt: 1_000, expiresAt: 5_000 })]);
      await store.close();
    });

    it("keep a decision as first given, unless it expired: then a new one replaces it", async () => {
      const store = await openFresh(harness);
      await store.rememberAlways("sender:slack:U1", "shell", 1_000, { expiresAt: 2_000 });
      const [first] = await store.listAlwaysRules();
      await store.rememberAlways("sender:slack:U1", "shell", 1_500, { expiresAt: 9_000 });
      expect(await store.listAlwaysRules()).toEqual([first]);
      await store.rememberAlways("sender:slack:U1", "shell", 3_000, { expiresAt: 9_000, personName: "Ann" });
      const [renewed] = await store.listAlwaysRules();
      expect(renewed).toMatchObject({ createdAt: 3_000, expiresAt: 9_000, personName: "Ann" });
      expect(renewed!.id).not.toBe(first!.id);
      expect(await store.hasAlways("sender:slack:U1", "shell", 3_001)).toBe(true);
      await store.close();
    });

    it("list one scope and the narrower scopes within it, and nothing else", async () => {
      const store = await openFresh(harness);
      await store.rememberAlways("session:slack:C1:1.2", "shell", 1);
      await store.rememberAlways("session:slack:C1:1.2|sender:slack:U1", "http_fetch", 2);
      await store.rememberAlways("session:slack:C1:1.20|sender:slack:U1", "shell", 3);
      await store.rememberAlways("session:slack:C1", "shell", 4);
      const under = await store.listAlwaysRules({ under: "session:slack:C1:1.2" });
      expect(under.map((r) => [r.scope, r.tool])).toEqual([
        ["session:slack:C1:1.2", "shell"],
        ["session:slack:C1:1.2|sender:slack:U1", "http_fetch"],
      ]);
      expect(await store.listAlwaysRules({ under: "session:slack:C9" })).toEqual([]);
      await store.close();
    });

    it("revoke one decision by id exactly once, after which it no longer applies", async () => {
      const store = await openFresh(harness);
      await store.rememberAlways("session:slack:C1:1.2|sender:slack:U1", "shell", 1);
      await store.rememberAlways("session:slack:C1:1.2|sender:slack:U1", "http_fetch", 1);
      const shell = (await store.listAlwaysRules()).find((r) => r.tool === "shell")!;
      const [a, b] = await Promise.all([store.revokeAlways(shell.id), store.revokeAlways(shell.id)]);
      expect([a, b].filter(Boolean)).toEqual([shell]);
      expect(await store.hasAlways(shell.scope, "shell")).toBe(false);
      expect(await store.hasAlways(shell.scope, "http_fetch")).toBe(true);
      expect(await store.getAlwaysRule(shell.id)).toBeUndefined();
      expect(await store.revokeAlways("nosuchid")).toBeUndefined();
      await store.close();
    });
  });
}
