import { describe, expect, it } from "vitest";
import { scrubSecrets } from "../../src/observe/scrub.ts";
import { progressLine } from "../../src/observe/progress.ts";

describe("scrubbing secrets from text", () => {
  it("masks values given under secret-looking names, keeping the names", () => {
    const cases: Array<[string, string]> = [
      ['{"password":"hunter2hunter2","user":"ann"}', '{"password":"[redacted]","user":"ann"}'],
      ["https://api.example.com/v1/x?api_key=AbCdEf123456789&page=2", "https://api.example.com/v1/x?api_key=[redacted]&page=2"],
      ["curl -H 'X-Api-Key: AbCdEf123456789' https://x", "curl -H 'X-Api-Key: [redacted]' https://x"],
      ["PGPASSWORD=s3cr3tpass psql -h db", "PGPASSWORD=[redacted] psql -h db"],
      ["Authorization: Bearer abc.def.ghi", "Authorization: [redacted]"],
      ["postgres://admin:s3cret@db.internal:5432/app", "postgres://[redacted]@db.internal:5432/app"],
      ["bot 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw ok", "bot [redacted] ok"],
      ["export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123", "export GITHUB_TOKEN=[redacted]"],
      ["pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz here", "pat [redacted] here"],
      ["aws AKIAIOSFODNN7EXAMPLE key", "aws [redacted] key"],
      ["refresh xoxe-1-My0xLTEyMzQ1Njc4OTAxMi1hYmNkZWY", "refresh [redacted]"],
      // Discord bot tokens: at the very start, inside JSON, and after another dot.
      ["MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.abcdefghijklmnopqrstuvwxyz0123", "[redacted]"],
      ['{"x":"MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.abcdefghijklmnopqrstuvwxyz0123"}', '{"x":"[redacted]"}'],
      ["v1.2 then MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.abcdefghijklmnopqrstuvwxyz0123.", "v1.2 then [redacted]."],
    ];
    for (const [input, expected] of cases) expect(scrubSecrets(input)).toBe(expected);
  });

  it("leaves ordinary prose, code and JSON alone", () => {
    const texts = [
      'The Bot documentation says {"author":"Jane","tokens":12}; see https://example.com/a?page=2.',
      "create(model=m, max_tokens=256)",
      'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
      "num_tokens = len(tokens)",
      "if token == expected:",
      'password = input("Password: ")',
      "**Authorization:** the server decides who may call it.",
      "Cookie: a small piece of data",
      '{"token_type": "bearer"}',
      "SECRET_KEY=<your key>",
      "Set GITHUB_TOKEN=your-token-here in .env",
      "token = self.tokenizer.decode(ids)",
      "api_key = settings.OPENAI_API_KEY_V2",
      "Build 20240131:release_candidate_for_the_big_launch_v2",
    ];
    for (const text of texts) expect(scrubSecrets(text)).toBe(text);
  });

  it("keeps secrets out of progress lines of any tool", () => {
    const start = progressLine({ type: "tool.start", callId: "c", tool: "db__query", hint: '{"password":"hunter2hunter2","sql":"select 1"}' })!;
    const fail = progressLine({ type: "tool.finish", callId: "c", tool: "shell", ms: 10, success: false, error: "exit 1: PGPASSWORD=s3cr3tpass psql failed" })!;
    expect(start).not.toContain("hunter2");
    expect(fail).not.toContain("s3cr3tpass");
    expect(start).toContain("⏳ db__query");
  });
});

describe("registered secrets", () => {
  it("ignores short word-like values that would blank out ordinary text", async () => {
    const { registerSecret } = await import("../../src/observe/scrub.ts");
    registerSecret("ollama");
    expect(scrubSecrets("install ollama, then run `ollama serve`")).toBe("install ollama, then run `ollama serve`");
    registerSecret("Zq9-registered-secret-value");
    expect(scrubSecrets("key Zq9-registered-secret-value here")).toBe("key [redacted] here");
  });
});

describe("the approval summary", () => {
  it("says when it cannot show all of the arguments", async () => {
    const { summarizeArgs } = await import("../../src/approval/summary.ts");
    const long = summarizeArgs({ command: `echo ${"x".repeat(5000)}; touch pwned` });
    expect(long).toMatch(/more characters are not shown.*deny if you are unsure/);
    const hidden = summarizeArgs({ command: "curl -H 'Authorization: Bearer abcdef0123456789' https://x" });
    expect(hidden).toMatch(/some values are hidden as \[redacted\]/);
    const plain = summarizeArgs({ command: "curl -s https://u:$(touch${IFS}pwned2)@example.invalid/" });
    expect(plain).toContain("$(touch${IFS}pwned2)");
  });
});
