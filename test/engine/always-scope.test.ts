/**
 * "Always" in a group chat without threads, where the whole chat is one session: one member's
 * Always must not run another member's calls without a card, unless the config says so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { engineFixture, type EngineFixture } from "./fixture.ts";

let fx: EngineFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const writeCall = (file: string, id: string) => ({ id, name: "write_file", arguments: JSON.stringify({ path: file, content: "x" }) });

describe("Always in a topic-less group", () => {
  it("does not cover another sender's later call of the same tool", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["always", "denied"];
    fx.emu.script({ toolCalls: [writeCall("mallory.txt", "m1")] }, { text: "ok" }, { toolCalls: [writeCall("alice.txt", "a1")] }, { text: "ok" });
    await fx.turn("write mine", { channel: "telegram", sender: "mallory", kind: "group" });
    await fx.turn("write mine too", { channel: "telegram", sender: "alice", kind: "group" });
    expect(fx.approvals.requests.map((r) => r.requester.id)).toEqual(["mallory", "alice"]);
  });

  it("still covers the same sender's next call", async () => {
    fx = await engineFixture();
    fx.approvals.answers = ["always"];
    fx.emu.script({ toolCalls: [writeCall("a.txt", "m1")] }, { text: "ok" }, { toolCalls: [writeCall("b.txt", "m2")] }, { text: "ok" });
    await fx.turn("write a", { channel: "telegram", sender: "mallory", kind: "group" });
    await fx.turn("write b", { channel: "telegram", sender: "mallory", kind: "group" });
    expect(fx.approvals.requests).toHaveLength(1);
  });

  it("covers everyone in the chat only when approval.alwaysCoversOthers says so", async () => {
    fx = await engineFixture({ approval: { alwaysCoversOthers: true } });
    fx.approvals.answers = ["always"];
    fx.emu.script({ toolCalls: [writeCall("mallory.txt", "m1")] }, { text: "ok" }, { toolCalls: [writeCall("alice.txt", "a1")] }, { text: "ok" });
    await fx.turn("write mine", { channel: "telegram", sender: "mallory", kind: "group" });
    await fx.turn("write mine too", { channel: "telegram", sender: "alice", kind: "group" });
    expect(fx.approvals.requests).toHaveLength(1);
  });
});
