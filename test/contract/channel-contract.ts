/**
 * The channel contract: one suite every channel adapter must pass, driving the FULL bot
 * (gateway, engine, approvals, delivery) through a platform harness, as a person in that
 * chat would. Each adapter's contract test file calls `runChannelContract` with its harness.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import type { ApprovalChoice } from "../../src/envelope.ts";
import type { Config } from "../../src/config/schema.ts";
import { startTestBot, eventually, quietFor, type TestBot } from "../support/bot.ts";
import { callTools, heldTool, lastUserText, messagesOf, routeModel, countingTool, type HeldTool } from "../support/scenario.ts";
import type { RecordedRequest } from "../emulators/openai/index.ts";
import type { ChannelHarness, PostedUserMessage, SeenMessage } from "./harness.ts";

/** Platform user ids the contract acts as. */
export interface ContractOptions {
  /** The person who talks to the bot (must be a valid user id on the platform). */
  userId: string;
  /** Someone else in the same chat, who may not approve the first person's calls. */
  strangerId: string;
}

const FENCE_LINE = /^\s*(```+|~~~+)/;

/** Text without fence marker lines and without whitespace: what must survive splitting and markup. */
function essence(text: string): string {
  return text
    .split("\n")
    .filter((l) => !FENCE_LINE.test(l))
    .join("")
    .replace(/\s+/g, "");
}

/** A long answer for a limit: prose paragraphs with a code block that straddles the first split point. */
export function longAnswer(limit: number): string {
  const paragraph = (n: number) => `Paragraph ${n} explains one step of the plan in plain words, so nothing gets lost when it is split. `.repeat(4).trim();
  const prose: string[] = [];
  for (let n = 1; prose.join("\n\n").length < limit * 0.7; n++) prose.push(paragraph(n));
  const code = ["```", ...Array.from({ length: Math.ceil(limit / 40) }, (_, i) => `let value${i} = compute(${i}) + offset${i};`), "```"];
  const tail: string[] = [];
  for (let n = 100; tail.join("\n\n").length < limit * 0.6; n++) tail.push(paragraph(n));
  return [prose.join("\n\n"), code.join("\n"), tail.join("\n\n")].join("\n\n");
}

/** Defines the contract suite for one channel. */
export function runChannelContract(name: string, makeHarness: () => Promise<ChannelHarness>, options: ContractOptions): void {
  describe(`channel contract: ${name}`, () => {
    let harness: ChannelHarness | undefined;
    let fixture: TestBot | undefined;
    let slow: HeldTool;
    let clock: ReturnType<typeof countingTool>;
    const { userId, strangerId } = options;

    async function setup(configure?: (config: Config) => void): Promise<{ h: ChannelHarness; tb: TestBot }> {
      harness = await makeHarness();
      slow = heldTool("slowstep");
      clock = countingTool("clock");
      fixture = await startTestBot({
        adapters: [harness.adapter],
        extraTools: [slow.tool, clock.tool],
        configure: (config) => {
          // write_file asks a person (supervised, risk write); the extra test tools need a profile that offers them.
          config.tools.profile = "full";
          config.approval.timeoutMs = 10_000;
          for (const channel of ["slack", "discord", "telegram"] as const) {
            config[channel].access = { ...config[channel].access, users: ["*"], conversations: ["*"] };
          }
          configure?.(config);
        },
      });
      return { h: harness, tb: fixture };
    }

    afterEach(async () => {
      slow?.release();
      await fixture?.close();
      await harness?.close();
      fixture = undefined;
      harness = undefined;
    });

    const inThread = (h: ChannelHarness, p: PostedUserMessage) => h.botMessages(p.conversationId, p.threadId);

    async function seenWith(h: ChannelHarness, p: PostedUserMessage, text: string | RegExp, timeoutMs = 8000): Promise<SeenMessage[]> {
      return eventually(async () => {
        const all = await inThread(h, p);
        return all.some((m) => (typeof text === "string" ? m.text.includes(text) : text.test(m.text))) && all;
      }, `a bot message matching ${String(text)}`, timeoutMs);
    }

    async function cardIn(h: ChannelHarness, p: PostedUserMessage): Promise<SeenMessage> {
      return eventually(async () => (await inThread(h, p)).find((m) => m.buttons.length > 0), "an approval card with buttons", 8000);
    }

    const payloadFor = (card: SeenMessage, choice: ApprovalChoice) => {
      const button = card.buttons.find((b) => decodeApprovalPayload(b.payload)?.choice === choice);
      if (!button) throw new Error(`the card has no ${choice} button: ${JSON.stringify(card.buttons)}`);
      return button.payload;
    };

    const requestsAbout = (tb: TestBot, words: string) => tb.model.requests.filter((r) => lastUserText(r).includes(words));
    const toolMessages = (r: RecordedRequest) => messagesOf(r).filter((m) => m.role === "tool").map((m) => String(m.content));
    const workspaceFile = (tb: TestBot, file: string) => path.join(tb.bot.config.workspace!, file);

    function routeSave(tb: TestBot, file: string, append = false) {
      routeModel(tb.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: file, content: "noted\n", append } }), then: { text: "Finished with the note." } },
      ]);
    }

    it("answers a user message in the thread it came from, with the user's words reaching the model", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [{ when: "hello there", first: { text: "Hello! How can I help?" } }]);
      const posted = await h.userSays("hello there", { userId });
      const seen = await seenWith(h, posted, "How can I help");
      expect(seen.every((m) => m.conversationId === posted.conversationId && m.threadId === posted.threadId)).toBe(true);
      expect(requestsAbout(tb, "hello there")).toHaveLength(1);
    });

    it("continues the same conversation when the person replies in the bot's thread", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [
        { when: "pelican", first: { text: "Noted: pelican." } },
        { when: "which bird", first: { text: "You said pelican." } },
      ]);
      const first = await h.userSays("remember the word pelican", { userId });
      await seenWith(h, first, "Noted");
      const second = await h.userSays("which bird did I name?", { userId, threadId: first.threadId });
      await seenWith(h, { ...second, threadId: first.threadId }, "You said pelican");
      const followUp = requestsAbout(tb, "which bird")[0]!;
      expect(messagesOf(followUp).some((m) => m.role === "user" && String(m.content).includes("remember the word pelican"))).toBe(true);
    });

    it("shows a task's progress in one status message before the answer, closed with its summary", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [{ when: "what time", first: callTools({ name: "clock" }), then: { text: "Here is the time you asked for." } }]);
      const posted = await h.userSays("what time is it?", { userId });
      await seenWith(h, posted, "Here is the time");
      // The summary follows the answer in the status message's next edit slot.
      const seen = await seenWith(h, posted, /✅ 1 step in [\d.]+ s/);
      const statusAt = seen.findIndex((m) => m.text.includes("✅ clock ("));
      const answerAt = seen.findIndex((m) => m.text.includes("Here is the time"));
      expect(statusAt).toBe(0);
      expect(answerAt).toBe(1);
      expect(seen).toHaveLength(2);
      expect(seen[0]!.text).toMatch(/✅ 1 step in [\d.]+ s$/);
      expect(clock.runs).toBe(1);
    });

    it("splits a long answer at the channel's limit without losing text or breaking code", async () => {
      const { h, tb } = await setup();
      const limit = h.adapter.capabilities.maxMessageChars;
      const answer = longAnswer(limit);
      routeModel(tb.model, [{ when: "long report", first: { text: answer } }]);
      const posted = await h.userSays("write the long report", { userId });
      const lastWords = "Paragraph";
      const parts = await eventually(async () => {
        const all = await inThread(h, posted);
        return essence(all.map((m) => m.text).join("\n")).length >= essence(answer).length && all;
      }, "every part of the long answer", 15_000);
      expect(parts.length).toBeGreaterThan(1);
      for (const part of parts) {
        expect(part.text.length).toBeLessThanOrEqual(limit);
        expect(part.text.split("\n").filter((l) => FENCE_LINE.test(l)).length % 2).toBe(0);
      }
      expect(essence(parts.map((m) => m.text).join("\n"))).toBe(essence(answer));
      const codeLines = answer.split("\n").filter((l) => l.startsWith("let value"));
      for (const line of codeLines) expect(parts.some((p) => p.text.includes(line))).toBe(true);
      expect(parts.at(-1)!.text).toContain(lastWords);
    });

    it("runs a tool once the person approves it on the card", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/approved.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      expect(existsSync(workspaceFile(tb, "notes/approved.txt"))).toBe(false);
      await h.click(card, payloadFor(card, "approve"), userId);
      await seenWith(h, posted, "Finished with the note");
      expect(readFileSync(workspaceFile(tb, "notes/approved.txt"), "utf8")).toBe("noted\n");
      const after = await eventually(async () => (await inThread(h, posted)).find((m) => m.id === card.id && m.buttons.length === 0), "the card without buttons");
      expect(after.text).toMatch(/approved/i);
    });

    it("does not run a denied tool, and tells the model who denied it", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/denied.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      await h.click(card, payloadFor(card, "deny"), userId);
      await seenWith(h, posted, "Finished with the note");
      expect(existsSync(workspaceFile(tb, "notes/denied.txt"))).toBe(false);
      const followUp = requestsAbout(tb, "save a note").at(-1)!;
      expect(toolMessages(followUp).join("\n")).toMatch(/denied by/);
      const after = await eventually(async () => (await inThread(h, posted)).find((m) => m.id === card.id && m.buttons.length === 0), "the card without buttons");
      expect(after.text).toMatch(/denied/i);
    });

    it("shows a refusal to someone who may not approve, and runs nothing", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/stranger.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      const shown = await h.click(card, payloadFor(card, "approve"), strangerId);
      expect(shown.shownToClicker).toMatch(/may not approve/i);
      await quietFor(300);
      expect(existsSync(workspaceFile(tb, "notes/stranger.txt"))).toBe(false);
      expect(requestsAbout(tb, "save a note")).toHaveLength(1);
      const still = (await inThread(h, posted)).find((m) => m.id === card.id)!;
      expect(still.buttons.length).toBeGreaterThan(0);
    });

    it("runs the tool once when the approve button is clicked twice", async () => {
      const { h, tb } = await setup();
      routeSave(tb, "notes/twice.txt", true);
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      const payload = payloadFor(card, "approve");
      await Promise.all([h.click(card, payload, userId), h.click(card, payload, userId)]);
      await seenWith(h, posted, "Finished with the note");
      await quietFor(200);
      expect(readFileSync(workspaceFile(tb, "notes/twice.txt"), "utf8")).toBe("noted\n");
    });

    it("expires an unanswered approval: the tool does not run and a late click is told so", async () => {
      const { h, tb } = await setup((config) => {
        config.approval.timeoutMs = 700;
      });
      routeSave(tb, "notes/late.txt");
      const posted = await h.userSays("please save a note", { userId });
      const card = await cardIn(h, posted);
      await seenWith(h, posted, "Finished with the note");
      const followUp = requestsAbout(tb, "save a note").at(-1)!;
      expect(toolMessages(followUp).join("\n")).toMatch(/timed out waiting for approval/);
      const shown = await h.click(card, payloadFor(card, "approve"), userId);
      expect(shown.shownToClicker).toMatch(/expired/i);
      await quietFor(200);
      expect(existsSync(workspaceFile(tb, "notes/late.txt"))).toBe(false);
    });

    it("stops a slow tool on /stop and does not ask the model again", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [{ when: "long job", first: callTools({ name: "slowstep" }), then: { text: "The long job is complete." } }]);
      const posted = await h.userSays("start the long job", { userId });
      await slow.started();
      await h.userSays("/stop", { userId, threadId: posted.threadId });
      await seenWith(h, posted, "Stopped.");
      await quietFor(200);
      expect(requestsAbout(tb, "long job")).toHaveLength(1);
      expect((await inThread(h, posted)).some((m) => m.text.includes("The long job is complete"))).toBe(false);
    });

    it("answers a redelivered event once", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [{ when: "just once", first: { text: "Answered exactly once." } }]);
      const posted = await h.userSays("answer this just once", { userId });
      await seenWith(h, posted, "Answered exactly once");
      await h.redeliverLast();
      await quietFor(500);
      const answers = (await inThread(h, posted)).filter((m) => m.text.includes("Answered exactly once"));
      expect(answers).toHaveLength(1);
      expect(requestsAbout(tb, "just once")).toHaveLength(1);
    });
  });
}
