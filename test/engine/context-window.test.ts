import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { RecordedRequest, Step } from "../emulators/openai/index.ts";
import { loadCheckpoint } from "../../src/engine/compaction.ts";
import { engineFixture, probeTool, toolMessages, type EngineFixture } from "./fixture.ts";

const WINDOW = 4000;
const WORDS = "the build failed on step three because the cache key changed after the lockfile update and the runner restarted twice".split(" ");

/** A tool result of about 2,400 characters of log-like prose, ending with a marker of its own. */
function report(n: string): string {
  let text = `report ${n}:`;
  for (let i = 0; text.length < 2400; i++) text += `${i % 17 === 0 ? "\n" : " "}${WORDS[(i * 7 + Number(n)) % WORDS.length]}`;
  return `${text}\nEND-OF-REPORT-${n}`;
}

type Msg = { role: string; content?: string | null; tool_calls?: unknown[] };
const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
const isSummaryRequest = (r: RecordedRequest) => String(messagesOf(r)[0]?.content).includes("running summary");

/** The emulated model: summaries for summary requests; otherwise it fetches the report asked for, then answers. */
function reportModel(r: RecordedRequest): Step {
  const msgs = messagesOf(r);
  if (isSummaryRequest(r)) return { text: `Summary so far: the team asked for ${msgs[1]?.content?.match(/report \d+/g)?.length ?? 0} more reports.` };
  const last = msgs[msgs.length - 1]!;
  if (last.role === "tool") return { text: `Read it: ${String(last.content).split("\n").at(-1)}` };
  const n = /report (\d+)/.exec(String(last.content))?.[1] ?? "0";
  return { toolCalls: [{ name: "fetch_report", arguments: JSON.stringify({ value: n }) }] };
}

let fx: EngineFixture | undefined;
let dir: string | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function reportFixture(options: { dir?: string; contextTokens?: number } = {}) {
  const probe = probeTool("fetch_report", { output: (args) => report(String(args.value)) });
  const f = await engineFixture({ tools: [probe.tool], policy: { profile: "full" }, contextTokens: options.contextTokens ?? WINDOW, dir: options.dir });
  f.emu.setFallback(reportModel);
  return f;
}

describe("long threads and the context window", () => {
  it("keeps answering a 30-turn thread of large tool results, every request within the window", async () => {
    fx = await reportFixture();
    for (let n = 1; n <= 30; n++) {
      const { outcome } = await fx.turn(`get report ${n}`);
      expect(outcome.status, `turn ${n}: ${outcome.text}`).toBe("done");
      expect(outcome.text).toBe(`Read it: END-OF-REPORT-${n}`);
    }
    const sizes = fx.emu.requests.map((r) => r.promptTokens!);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
    expect(fx.events.some((e) => e.event === "context.pruned" && e.traceId)).toBe(true);
    const compactions = fx.events.filter((e) => e.event === "context.compacted");
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions.every((e) => e.traceId && e.reason === "budget")).toBe(true);
  });

  it("sends summary requests without tools, and the current turn's result whole", async () => {
    fx = await reportFixture();
    for (let n = 1; n <= 12; n++) await fx.turn(`get report ${n}`);
    const summaries = fx.emu.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(0);
    for (const r of summaries) expect(r.body.tools).toBeUndefined();
    // Every answer request carries its own turn's report untouched, beside its call.
    const answers = fx.emu.requests.filter((r) => !isSummaryRequest(r) && messagesOf(r).at(-1)?.role === "tool");
    expect(answers).toHaveLength(12);
    answers.forEach((r, i) => expect(toolMessages(r.body).at(-1)!.content).toBe(report(String(i + 1))));
    // Older reports were shortened with the cut marker, never dropped from beside their call.
    const late = toolMessages(answers.at(-1)!.body);
    expect(late.slice(0, -1).some((m) => m.content.includes("characters cut from the middle"))).toBe(true);
  });

  it("keeps answering when summaries fail (the endpoint errs on them): the oldest messages are left out that once, and summarized when it works again", async () => {
    fx = await reportFixture();
    let summariesFail = true;
    fx.emu.setFallback((r) => (isSummaryRequest(r) && summariesFail ? { status: 500, message: "boom" } : reportModel(r)));
    const notices: string[] = [];
    for (let n = 1; n <= 10; n++) {
      const { outcome, turnEvents } = await fx.turn(`get report ${n}`);
      expect(outcome, `turn ${n}`).toMatchObject({ status: "done", text: `Read it: END-OF-REPORT-${n}` });
      notices.push(...turnEvents.flatMap((e) => (e.type === "notice" ? [e.text] : [])));
    }
    expect(Math.max(...fx.emu.requests.map((r) => r.promptTokens!))).toBeLessThanOrEqual(WINDOW);
    expect(fx.events.filter((e) => e.event === "context.compact_failed").length).toBeGreaterThan(0);
    expect(notices.some((t) => /^⚠️ Left \d+ earlier messages? out of this answer to fit the model's context window: summarizing them failed/.test(t))).toBe(true);
    expect(fx.events.some((e) => e.event === "context.compacted")).toBe(false);

    summariesFail = false;
    expect((await fx.turn("get report 11")).outcome).toMatchObject({ status: "done", text: "Read it: END-OF-REPORT-11" });
    expect(fx.events.some((e) => e.event === "context.compacted")).toBe(true);
  });

  it("after a context_length_exceeded refusal compacts once and retries, and the answer arrives", async () => {
    fx = await reportFixture({ contextTokens: 100_000 });
    for (let n = 1; n <= 3; n++) await fx.turn(`get report ${n}`);
    const before = fx.emu.requests.length;
    fx.emu.script({
      status: 400, code: "context_length_exceeded",
      message: "This model's maximum context length is 4000 tokens. However, your messages resulted in 4890 tokens. Please reduce the length of the messages.",
    });
    const { outcome } = await fx.turn("get report 4");
    expect(outcome.status).toBe("done");
    expect(outcome.text).toBe("Read it: END-OF-REPORT-4");
    const after = fx.emu.requests.slice(before);
    expect(isSummaryRequest(after[1]!)).toBe(true);
    expect(after[1]!.body.tools).toBeUndefined();
    expect(String(messagesOf(after[2]!)[0]!.content)).toContain("Summary so far");
    const names = fx.events.map((e) => e.event).filter((e) => e.startsWith("context."));
    expect(names.slice(0, 2)).toEqual(["context.refused", "context.compacted"]);
    expect(fx.events.find((e) => e.event === "context.compacted")).toMatchObject({ reason: "refused", traceId: "trace4" });
  });

  it("tells the person plainly, with /new, when the retry is refused too", async () => {
    fx = await reportFixture({ contextTokens: 100_000 });
    await fx.turn("get report 1");
    fx.emu.setFallback((r) => (isSummaryRequest(r) ? { text: "Summary so far: one report." } : { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" }));
    const { outcome } = await fx.turn("get report 2");
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatch(/no longer fits in the model's context window .*Send \/new to start a fresh conversation/);
    expect(fx.events.some((e) => e.event === "context.overflow")).toBe(true);
  });

  it("a session reopened after a restart starts from its stored compaction instead of summarizing again", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gh-compaction-"));
    fx = await reportFixture({ dir });
    let n = 0;
    while (!fx.events.some((e) => e.event === "context.compacted")) await fx.turn(`get report ${++n}`);
    const stored = await loadCheckpoint(fx.store, "console:c1");
    expect(stored).toMatchObject({ version: 1, compactions: 1 });
    expect(stored!.covers).toBeGreaterThan(0);
    await fx.close();

    fx = await reportFixture({ dir });
    const { outcome } = await fx.turn(`get report ${++n}`);
    expect(outcome.status).toBe("done");
    expect(fx.emu.requests.some(isSummaryRequest)).toBe(false);
    const first = messagesOf(fx.emu.requests[0]!);
    expect(String(first[0]!.content)).toContain(stored!.summary);
    // The covered turns are not sent again: the first report asked for is not among the messages.
    expect(first.some((m) => m.content === "get report 1")).toBe(false);
  });
});
