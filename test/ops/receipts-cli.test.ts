import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { startMemoryBot, type MemoryBot } from "../gateway/memory-bot.ts";
import { callTools, messagesOf, routeModel } from "../support/scenario.ts";
import { runCli } from "./cli-run.ts";

let mb: MemoryBot | undefined;
afterEach(async () => {
  await mb?.close();
  mb = undefined;
});

describe("gatehouse receipts verify", () => {
  it("confirms a receipt the bot issued for the exact output, and rejects it for another output or tool", async () => {
    mb = await startMemoryBot({
      configure: (config) => {
        config.receipts.enabled = true;
        config.receipts.show = true;
      },
    });
    routeModel(mb.tb.model, [{ when: "what time is it", first: callTools({ name: "current_time", args: { timezone: "UTC" } }), then: { text: "told" } }]);
    const env = await mb.channel.say("what time is it");
    await mb.waitFor(env, "told");
    const line = mb.texts(env).find((t) => t.includes("receipt gr1."))!;
    const receipt = /receipt (gr1\.\d+\.[0-9a-f]{64})/.exec(line)![1]!;
    const output = String(messagesOf(mb.tb.model.requests[1]!).find((m) => m.role === "tool")!.content);
    const dataDir = mb.tb.dataDir;
    const cli = (args: string[]) => runCli(["receipts", "verify", receipt, ...args], { GATEHOUSE_DATA_DIR: dataDir, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });

    const outputFile = path.join(dataDir, "output.txt");
    writeFileSync(outputFile, output);
    const ok = await cli(["--tool", "current_time", "--output-file", outputFile]);
    expect(ok.stdout).toMatch(/^valid: current_time ran at/);
    expect(ok.code).toBe(0);

    const wrongTool = await cli(["--tool", "shell", "--output-file", outputFile]);
    expect(wrongTool.code).toBe(1);
    writeFileSync(outputFile, `${output} (edited)`);
    const wrongOutput = await cli(["--tool", "current_time", "--output-file", outputFile]);
    expect(wrongOutput.code).toBe(1);
    expect(wrongOutput.stdout).toMatch(/^INVALID/);

    // A file that cannot be read is no verdict on the receipt: usage error, saying which file.
    const missing = await cli(["--tool", "current_time", "--output-file", path.join(dataDir, "nope.txt")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`--output-file: cannot read ${path.join(dataDir, "nope.txt")}: ENOENT\n`);
  });

  it("stores the receipts of a turn's calls by the time its answer is out, when the chat does not show them", async () => {
    mb = await startMemoryBot({
      configure: (config) => {
        config.receipts.enabled = true;
      },
    });
    routeModel(mb.tb.model, [{
      when: "what time is it",
      first: callTools({ name: "current_time", args: { timezone: "UTC" } }, { name: "current_time", args: { timezone: "Asia/Tokyo" } }),
      then: { text: "told" },
    }]);
    const env = await mb.channel.say("what time is it");
    await mb.waitFor(env, "told");
    expect(mb.texts(env).some((t) => t.includes("receipt gr1."))).toBe(false);
    const stored = await mb.tb.bot.store.listReceipts();
    // Receipts of one moment are listed by id: in no particular order.
    expect(stored.map((r) => JSON.parse(r.argsCanonical).timezone).sort()).toEqual(["Asia/Tokyo", "UTC"]);
    expect(stored.every((r) => r.tool === "current_time")).toBe(true);
    const output = String(messagesOf(mb.tb.model.requests[1]!).find((m) => m.role === "tool")!.content);
    const outputFile = path.join(mb.tb.dataDir, "output.txt");
    writeFileSync(outputFile, output);
    const first = stored.find((r) => JSON.parse(r.argsCanonical).timezone === "UTC")!;
    const ok = await runCli(["receipts", "verify", first.id, "--tool", "current_time", "--output-file", outputFile], {
      GATEHOUSE_DATA_DIR: mb.tb.dataDir, OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    });
    expect(ok.stdout).toMatch(/^valid: current_time ran at/);
  });
});
