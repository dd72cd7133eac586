import { afterEach, expect, it } from "vitest";
import { createTelegramHarness, type TelegramHarness } from "./harness.ts";
import { RecordingSink } from "./recording-sink.ts";

let h: TelegramHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it("a topic message posted through the harness reaches the bot and the reply shows in that topic", async () => {
  h = await createTelegramHarness();
  const sink = new RecordingSink();
  await h.adapter.start(sink);
  const posted = await h.userSays("hello", { threadId: "44", userId: "9" });
  const [env] = await sink.waitForEnvelopes(1);
  expect(env).toMatchObject({ conversation: { id: posted.conversationId, threadId: "44", kind: "group" }, sender: { id: "9" }, text: "hello" });
  await h.adapter.port.send(env!.replyTo, { text: "hi **there**" });
  const seen = await h.botMessages(posted.conversationId, posted.threadId);
  expect(seen.map((m) => [m.text, m.threadId])).toEqual([["hi there", "44"]]);
  expect(await h.botMessages(posted.conversationId, "45")).toEqual([]);
});
