/**
 * The progress contract: how a task's progress reads in a platform's thread, driving the FULL bot
 * through a platform harness with the adapter's own pacing (the budget under test), while the
 * platform's emulator counts every edit. By default one live status message per task, edited within
 * the platform's edit budget and closed with a summary; `progress: "lines"` and `"off"` as they say.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeApprovalPayload } from "../../src/approval/card.ts";
import type { Config } from "../../src/config/schema.ts";
import type { Tool } from "../../src/tools/tool.ts";
import { eventually, quietFor, startTestBot, type TestBot } from "../support/bot.ts";
import { callTools, heldTool, routeModel, type HeldTool } from "../support/scenario.ts";
import type { ChannelHarness, PostedUserMessage, SeenMessage } from "./harness.ts";

/** What the progress contract needs to know of a platform besides its harness. */
export interface ProgressPlatform<H extends ChannelHarness> {
  /** The harness, its adapter keeping its own pacing. */
  makeHarness(): Promise<H>;
  /** The person who talks to the bot. */
  userId: string;
  /** Every edit of a message the emulator saw: when, and whether it refused it with 429. */
  edits(h: H): Array<{ at: number; limited: boolean }>;
  /** Typing / working-status calls the emulator saw. */
  typingCalls(h: H): number;
  /** The platform's budget for edits in one conversation: at most `limit` in any `windowMs`. */
  editBudget: { limit: number; windowMs: number };
  /** The text of a message as the bot sent it (with link targets, which the shown text may hide). */
  rawText(h: H, message: SeenMessage): Promise<string>;
  /** What the link to an approval card looks like on this platform. */
  cardLink: RegExp;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A read tool that takes `ms` to run: one step of a long task. */
function stepTool(ms: number): Tool<Record<string, unknown>> {
  return {
    name: "step",
    description: "Runs one step of a long task.",
    parameters: z.record(z.string(), z.unknown()),
    risk: "read",
    owner: "builtin",
    hint: (args) => `part ${String(args.n)}`,
    async execute(args) {
      await sleep(ms);
      return { success: true, output: `part ${String(args.n)} done` };
    },
  };
}

const steps = (n: number) => callTools(...Array.from({ length: n }, (_, i) => ({ name: "step", args: { n: i + 1 } })));

/** True when no `windowMs` window holds more than `limit` of `times`. */
function withinBudget(times: number[], budget: { limit: number; windowMs: number }): boolean {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.every((t, i) => sorted.filter((u, j) => j >= i && u < t + budget.windowMs).length <= budget.limit);
}

/** Defines the progress suite for one channel. */
export function runProgressContract<H extends ChannelHarness>(name: string, platform: ProgressPlatform<H>): void {
  describe(`progress contract: ${name}`, () => {
    let harness: H | undefined;
    let fixture: TestBot | undefined;
    let slow: HeldTool;

    async function setup(configure?: (config: Config) => void, stepMs = 20): Promise<{ h: H; tb: TestBot }> {
      harness = await platform.makeHarness();
      slow = heldTool("slowstep");
      fixture = await startTestBot({
        adapters: [harness.adapter],
        extraTools: [slow.tool, stepTool(stepMs)],
        configure: (config) => {
          config.tools.profile = "full";
          config.approval.timeoutMs = 15_000;
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

    const inThread = (h: H, p: PostedUserMessage) => h.botMessages(p.conversationId, p.threadId);
    const answerIn = (h: H, p: PostedUserMessage, text: string) =>
      eventually(async () => {
        const all = await inThread(h, p);
        return all.some((m) => m.text.includes(text)) && all;
      }, `the answer "${text}"`);
    const statusWith = (h: H, p: PostedUserMessage, text: string | RegExp) =>
      eventually(async () => (await inThread(h, p)).find((m) => (typeof text === "string" ? m.text.includes(text) : text.test(m.text))), `a status message showing ${String(text)}`);

    it("posts one status message and one answer for a 12-call task; the status message ends with its summary", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [{ when: "twelve parts", first: steps(12), then: { text: "All twelve parts are done." } }]);
      const posted = await h.userSays("build the twelve parts", { userId: platform.userId });
      await answerIn(h, posted, "All twelve parts are done");
      const status = await statusWith(h, posted, /✅ 12 steps in [\d.]+ s/);
      const messages = await inThread(h, posted);
      expect(messages).toHaveLength(2);
      expect(messages.map((m) => m.id).indexOf(status.id)).toBe(0);
      expect(status.text.match(/✅ step \(/g)).toHaveLength(12);
      expect(status.text.split("\n").at(-1)).toMatch(/^✅ 12 steps in [\d.]+ s$/);
    });

    it("keeps its edits within the platform's budget under a 50-call burst, and ends in the right state", async () => {
      const { h, tb } = await setup(undefined, 80);
      routeModel(tb.model, [{ when: "fifty parts", first: steps(50), then: { text: "All fifty parts are done." } }]);
      const posted = await h.userSays("build the fifty parts", { userId: platform.userId });
      await answerIn(h, posted, "All fifty parts are done");
      const status = await statusWith(h, posted, "✅ 50 steps in");
      await quietFor(300);
      const edits = platform.edits(h);
      expect(edits.filter((e) => e.limited)).toEqual([]);
      expect(withinBudget(edits.map((e) => e.at), platform.editBudget)).toBe(true);
      // Coalesced: far fewer edits than the 100 events, and the last one shows the end.
      expect(edits.length).toBeLessThan(40);
      expect(status.text).toMatch(/… \d+ earlier lines/);
      expect(status.text).toContain("✅ step (");
      expect((await inThread(h, posted)).map((m) => m.id)).toEqual([status.id, expect.any(String)]);
    });

    it("shows a call waiting for approval with a link to its card, then the denial and the summary", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: "notes/no.txt", content: "x\n" } }), then: { text: "The note was not saved." } },
      ]);
      const posted = await h.userSays("please save a note", { userId: platform.userId });
      const card = await eventually(async () => (await inThread(h, posted)).find((m) => m.buttons.length > 0), "the approval card");
      const waiting = await statusWith(h, posted, "🔐 write_file: waiting for approval");
      await eventually(async () => platform.cardLink.test(await platform.rawText(h, (await inThread(h, posted)).find((m) => m.id === waiting.id)!)), "the link to the card");
      const deny = card.buttons.find((b) => decodeApprovalPayload(b.payload)?.choice === "deny")!;
      await h.click(card, deny.payload, platform.userId);
      await answerIn(h, posted, "The note was not saved");
      const status = await statusWith(h, posted, "· 1 denied");
      expect(status.id).toBe(waiting.id);
      expect(status.text).toMatch(/🚫 write_file: denied by /);
      expect(status.text).not.toContain("waiting for approval");
      expect(status.text.split("\n").at(-1)).toMatch(/^✅ 0 steps in [\d.]+ s · 1 approval · 1 denied$/);
    });

    it("shows typing while the task computes, and none while it waits for a person", async () => {
      const { h, tb } = await setup();
      routeModel(tb.model, [
        { when: "save a note", first: callTools({ name: "write_file", args: { path: "notes/wait.txt", content: "x\n" } }), then: { text: "Saved." } },
      ]);
      const posted = await h.userSays("please save a note", { userId: platform.userId });
      await eventually(async () => (await inThread(h, posted)).find((m) => m.buttons.length > 0), "the approval card");
      expect(platform.typingCalls(h)).toBeGreaterThan(0);
      await quietFor(500);
      const whileWaiting = platform.typingCalls(h);
      await quietFor(4500);
      expect(platform.typingCalls(h)).toBe(whileWaiting);
    });

    it('with progress "lines", posts progress lines as their own messages and edits nothing', async () => {
      const { h, tb } = await setup((config) => {
        config.progress = "lines";
      });
      routeModel(tb.model, [{ when: "long job", first: callTools({ name: "slowstep" }), then: { text: "The long job is complete." } }]);
      const posted = await h.userSays("start the long job", { userId: platform.userId });
      await slow.started();
      await eventually(async () => (await inThread(h, posted)).some((m) => m.text.includes("⏳ slowstep")), "the start line");
      slow.release();
      const all = await answerIn(h, posted, "The long job is complete");
      const started = all.find((m) => m.text.includes("⏳ slowstep"))!;
      const finished = all.find((m) => m.text.includes("✅ slowstep"))!;
      expect(finished.id).not.toBe(started.id);
      expect(all.some((m) => /steps? in/.test(m.text))).toBe(false);
      expect(platform.edits(h)).toEqual([]);
    });

    it('with progress "off", posts nothing but the answer', async () => {
      const { h, tb } = await setup((config) => {
        config.progress = "off";
      });
      routeModel(tb.model, [{ when: "twelve parts", first: steps(3), then: { text: "The parts are done." } }]);
      const posted = await h.userSays("build the twelve parts", { userId: platform.userId });
      await answerIn(h, posted, "The parts are done");
      await quietFor(500);
      expect((await inThread(h, posted)).map((m) => m.text)).toEqual([expect.stringContaining("The parts are done")]);
      expect(platform.edits(h)).toEqual([]);
    });
  });
}
