import { describe, expect, it } from "vitest";
import { encodeApprovalPayload } from "../../src/approval/card.ts";
import { decodeButtonPayload, encodeButtonPayload, MAX_BUTTON_PAYLOAD_BYTES, type ButtonClick } from "../../src/envelope.ts";
import { ButtonRoutes, NOT_A_VALID_BUTTON } from "../../src/gateway/button-routes.ts";
import { silentLogger } from "../../src/observe/logger.ts";

const click = (payload: string, isBot = false): ButtonClick => ({
  channel: "slack", payload, actor: { id: "U1", name: "Ann", isBot }, messageId: "171.2", conversationId: "C1",
});

describe("message button payloads", () => {
  it("round-trip a kind and its data, within Telegram's 64 bytes", () => {
    const payload = encodeButtonPayload("always", "AbCd_-12.xYz-_0123456789");
    expect(decodeButtonPayload(payload)).toEqual({ kind: "always", data: "AbCd_-12.xYz-_0123456789" });
    expect(Buffer.byteLength(encodeButtonPayload("abcdefghijklmnop", "x".repeat(40)))).toBeLessThanOrEqual(MAX_BUTTON_PAYLOAD_BYTES);
  });

  it("never read an approval card's payload, or a forged one, as a message button", () => {
    expect(decodeButtonPayload(encodeApprovalPayload("abcdef123", "approve"))).toBeUndefined();
    for (const forged of ["ghb:always", "ghb::x", "ghb:Always:x", "ghb:always:../x", `ghb:always:${"x".repeat(41)}`, "ghb:always:a b"]) {
      expect(decodeButtonPayload(forged)).toBeUndefined();
    }
    expect(() => encodeButtonPayload("always", "no spaces")).toThrow(/not a valid button payload/);
  });
});

describe("button routes", () => {
  it("hand a click to the handler of its kind, with its data", async () => {
    const routes = new ButtonRoutes(silentLogger());
    const seen: string[] = [];
    routes.register("always", async (c, data) => {
      seen.push(`${c.actor.id}:${data}`);
      return { message: "done" };
    });
    routes.register("elicit", async () => ({ message: "other kind" }));
    expect(await routes.handle(click("ghb:always:list.rule"))).toEqual({ message: "done" });
    expect(seen).toEqual(["U1:list.rule"]);
  });

  it("refuse a malformed click, a kind nothing handles and a bot's click, without calling any handler", async () => {
    const routes = new ButtonRoutes(silentLogger());
    let calls = 0;
    routes.register("always", async () => ({ message: String(++calls) }));
    expect(await routes.handle(click("gh1:abcdef:a"))).toEqual({ message: NOT_A_VALID_BUTTON });
    expect(await routes.handle({ ...click("ghb:always:x"), messageId: "" })).toEqual({ message: NOT_A_VALID_BUTTON });
    expect((await routes.handle(click("ghb:unknown:x"))).message).toMatch(/does nothing any more/);
    expect((await routes.handle(click("ghb:always:x", true))).message).toMatch(/for people/);
    expect(calls).toBe(0);
  });

  it("turn a handler's failure into a message to the clicker", async () => {
    const routes = new ButtonRoutes(silentLogger());
    routes.register("always", async () => {
      throw new Error("database gone");
    });
    expect((await routes.handle(click("ghb:always:x"))).message).toMatch(/could not be handled; nothing changed/);
  });

  it("keep one handler per kind", () => {
    const routes = new ButtonRoutes(silentLogger());
    routes.register("always", async () => ({}));
    expect(() => routes.register("always", async () => ({}))).toThrow(/already registered/);
    expect(() => routes.register("Bad Kind", async () => ({}))).toThrow(/not a valid button kind/);
  });
});
