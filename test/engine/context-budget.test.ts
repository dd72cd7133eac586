import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { ChatMessage } from "../../src/model/types.ts";
import { AppendedCount, budgetOf, encodingFor, estimateTokens, meterFor, pruneToolResults, PromptMeter, REPLY_PRIMING, windowTokens } from "../../src/engine/context-budget.ts";
import { afterCheckpoint, contextStatus, fingerprint, loadCheckpoint, saveGauge, turnStarts, type CompactionCheckpoint } from "../../src/engine/compaction.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { tempDataDir } from "../store/temp-dir.ts";

const o200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

describe("the context budget", () => {
  it("plans with the smaller of the configured and the reported window, else 32,000", () => {
    expect(windowTokens(8000, 32768)).toBe(8000);
    expect(windowTokens(128_000, 4096)).toBe(4096);
    expect(windowTokens(undefined, 4096)).toBe(4096);
    expect(windowTokens(undefined, undefined)).toBe(32_000);
  });

  it("keeps room for the answer and the tool specs", () => {
    expect(budgetOf(32_000, 1000)).toEqual({ windowTokens: 32_000, answerTokens: 4000, toolTokens: 1000, promptTokens: 27_000 });
    expect(budgetOf(4000, 600).answerTokens).toBe(500);
    expect(budgetOf(4000, 600, 1000).promptTokens).toBe(2400);
  });

  it("counts OpenAI models exactly and every other model with a conservative estimate", async () => {
    expect(encodingFor("gpt-4o-mini")).toBe("o200k_base");
    expect(encodingFor("openai/gpt-5")).toBe("o200k_base");
    expect(encodingFor("gpt-4-turbo")).toBe("cl100k_base");
    expect(encodingFor("qwen2.5-coder:7b")).toBeUndefined();
    const exact = await meterFor("gpt-4o");
    expect(exact.exact).toBe(true);
    expect(exact.text("hello world")).toBe(o200k("hello world"));
    expect((await meterFor("llama3.1")).exact).toBe(false);
  });

  it("estimates at least what o200k counts for prose, code, JSON, logs and ids", () => {
    const samples = [
      readFileSync(new URL("../../README.md", import.meta.url), "utf8"),
      readFileSync(new URL("../../src/engine/turn.ts", import.meta.url), "utf8"),
      readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8").slice(0, 50_000),
      Array.from({ length: 500 }, (_, i) => `-rw-r--r-- 1 root root ${i * 137} Jan 12 10:${String(i % 60).padStart(2, "0")} file_${i}.txt`).join("\n"),
      Array.from({ length: 500 }, () => randomUUID()).join("\n"),
      "这是一个测试。我们需要估计中文文本的标记数量。".repeat(50),
    ];
    for (const text of samples) expect(estimateTokens(text)).toBeGreaterThanOrEqual(o200k(text));
  });
});

describe("counting a turn's messages before each request", () => {
  it("gives what counting them all again gives, as the turn grows, after a rescale and for another list", () => {
    const meter = new PromptMeter(undefined);
    const count = new AppendedCount();
    const turn: ChatMessage[] = [{ role: "user", content: "what is in the folder and what time is it?" }];
    const full = (list: ChatMessage[]) => meter.messages(list) - REPLY_PRIMING;
    expect(count.of(meter, turn)).toBe(full(turn));
    for (let i = 0; i < 5; i++) {
      turn.push(
        { role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "list_files", arguments: `{"path":"dir${i}"}` } }] },
        { role: "tool", tool_call_id: `c${i}`, content: `file-${i}.txt\n`.repeat(20 * (i + 1)) },
      );
      expect(count.of(meter, turn)).toBe(full(turn));
    }
    meter.scale = 1.2;
    expect(count.of(meter, turn)).toBe(full(turn));
    const summary = [...turn, { role: "user", content: "summarize" } as ChatMessage];
    expect(count.of(meter, summary)).toBe(full(summary));
    expect(count.of(meter, summary)).toBeGreaterThan(full(turn));
  });
});

describe("pruning old tool results", () => {
  const call = (id: string): ChatMessage => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: `{"path":"${id}.txt"}` } }] });
  const history: ChatMessage[] = [
    { role: "user", content: "read a" }, call("a"), { role: "tool", tool_call_id: "a", content: `A-head ${"x ".repeat(3000)} A-tail` }, { role: "assistant", content: "read" },
    { role: "user", content: "read b" }, call("b"), { role: "tool", tool_call_id: "b", content: `B-head ${"y ".repeat(3000)} B-tail` }, { role: "assistant", content: "read" },
  ];
  const meter = new PromptMeter(undefined);

  it("shortens the oldest results first to their head and tail, keeping every call beside its result", () => {
    const total = meter.messages(history);
    const pruned = pruneToolResults(history, 0, total - 500, meter);
    expect(pruned.results).toBe(1);
    expect(pruned.tokens).toBeLessThanOrEqual(total - 500);
    const a = pruned.messages[2] as { content: string };
    expect(a.content).toMatch(/^A-head[\s\S]*characters cut from the middle[\s\S]*A-tail$/);
    expect(pruned.messages[6]).toBe(history[6]);
    expect(pruned.messages.map((m) => m.role)).toEqual(history.map((m) => m.role));
    expect(history[2]!.content).toContain("x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x");
  });

  it("leaves a history that fits alone", () => {
    expect(pruneToolResults(history, 0, 1_000_000, meter)).toMatchObject({ results: 0, messages: history });
  });
});

describe("the compaction checkpoint", () => {
  const msgs: ChatMessage[] = [
    { role: "user", content: "one" }, { role: "assistant", content: "ok" },
    { role: "user", content: "two" }, { role: "assistant", content: "ok" },
    { role: "user", content: "three" }, { role: "assistant", content: "ok" },
  ];
  const checkpointAfter = (i: number): CompactionCheckpoint => ({
    version: 1, summary: "s", covers: i + 1, anchor: fingerprint(msgs[i]!), before: fingerprint(msgs[i - 1]!), compactions: 1, at: 0,
  });

  it("finds the last covered message by its fingerprint, not by a repeated text", () => {
    expect(afterCheckpoint(msgs, checkpointAfter(3))).toEqual({ rest: msgs.slice(4), covered: 4 });
    // The history limit dropped the first turn: the anchor is found further forward.
    expect(afterCheckpoint(msgs.slice(2), checkpointAfter(3))).toEqual({ rest: msgs.slice(4), covered: 2 });
    // Gone past the anchor altogether: every loaded message is after it.
    expect(afterCheckpoint(msgs.slice(4), checkpointAfter(3))).toEqual({ rest: msgs.slice(4), covered: 0 });
  });

  it("splits a history into turns at user messages", () => {
    expect(turnStarts(msgs)).toEqual([0, 2, 4]);
    expect(turnStarts([])).toEqual([]);
  });

  it("loads a checkpoint stored in schema version 1, and ignores one it cannot read", async () => {
    const store = await openSqliteStore({ dataDir: tempDataDir() });
    try {
      // As Gatehouse wrote it when checkpoints were introduced.
      const v1 = '{"version":1,"summary":"Ann asked for reports 1-3; all read.","covers":12,"anchor":"AbCdEfGhIjKlMnOpQrStUv","before":"ZyXwVuTsRqPoNmLkJiHgFe","compactions":1,"at":1764582000000}';
      await store.setValue("compaction:console:c1", v1);
      expect(await loadCheckpoint(store, "console:c1")).toEqual(JSON.parse(v1));
      await store.setValue("compaction:console:c2", '{"version":2,"summary":"from a newer Gatehouse"}');
      expect(await loadCheckpoint(store, "console:c2")).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("says on /status how full the context is and how often it was compacted", async () => {
    const store = await openSqliteStore({ dataDir: tempDataDir() });
    try {
      expect(await contextStatus(store, "k")).toBeUndefined();
      await saveGauge(store, "k", { usedTokens: 19_520, windowTokens: 32_000, compactions: 2, at: 0 });
      expect(await contextStatus(store, "k")).toBe("Context 61% of 32K, compacted twice.");
      await saveGauge(store, "k", { usedTokens: 100, windowTokens: 131_072, compactions: 0, at: 0 });
      expect(await contextStatus(store, "k")).toBe("Context 0% of 128K.");
    } finally {
      await store.close();
    }
  });
});
