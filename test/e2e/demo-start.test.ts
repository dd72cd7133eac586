/**
 * What a newcomer does on a fresh machine: `npm start` with no model endpoint, typing on the console.
 * The children run as a person runs them: `npm start` (npm scripts find the bundled Node), and
 * bin/gatehouse.js on the machine's own Node (/usr/bin/node, Node 20 here), which runs itself again
 * on the bundled Node.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const REPO = path.resolve(import.meta.dirname, "../..");
const SYSTEM_NODE = "/usr/bin/node";
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"].join(":");
const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Settings a developer's .env might hold, blanked (an existing variable wins over .env). */
const NO_SETTINGS = {
  OPENAI_API_KEY: "", OPENAI_BASE_URL: "", GATEHOUSE_CONFIG: "", GATEHOUSE_CHANNELS: "", DATABASE_URL: "", PORT: "",
  SLACK_BOT_TOKEN: "", SLACK_APP_TOKEN: "", SLACK_SIGNING_SECRET: "", DISCORD_TOKEN: "", TELEGRAM_BOT_TOKEN: "",
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` with `input` piped to stdin (then closed), in a fresh data folder. */
function run(command: string, args: string[], input: string, env: Record<string, string> = {}, cwd = REPO): Promise<Run> {
  const data = mkdtempSync(path.join(tmpdir(), "gh-demo-"));
  dirs.push(data);
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: SYSTEM_PATH, HOME: data, GATEHOUSE_DATA_DIR: path.join(data, "data"), ...NO_SETTINGS, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe("npm start with no model endpoint", () => {
  it("answers hello on the console through the built-in demo model, and says so", async () => {
    const result = await run("npm", ["start", "--silent"], "hello\n");
    expect(result.stderr).toContain("demo model — set OPENAI_API_KEY or OPENAI_BASE_URL for a real one");
    expect(result.stdout).toMatch(/gatehouse › Hello! I am Gatehouse's built-in demo model/);
    expect(result.code).toBe(0);
  }, 60_000);

  it.skipIf(!existsSync(SYSTEM_NODE))("runs a tool with progress lines when started with the machine's own Node", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "gh-demo-cwd-"));
    dirs.push(cwd);
    const result = await run(SYSTEM_NODE, [path.join(REPO, "bin/gatehouse.js"), "start"], "what time is it\n", {}, cwd);
    expect(result.stdout).toMatch(/⏳ current_time[\s\S]*✅ current_time \(\d+\.\ds\)[\s\S]*gatehouse › Done\. The tool said/);
    expect(result.code).toBe(0);
  }, 60_000);

  it("asks before running a shell command (npm run demo), then runs it once approved", async () => {
    const result = await run("npm", ["run", "--silent", "demo"], "run echo demo-ran\ny\n", { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(result.stdout).toContain("🔐 Approval needed: shell");
    expect(result.stdout).toMatch(/✅ shell[\s\S]*demo-ran/);
    expect(result.code).toBe(0);
  }, 60_000);

  it("keeps Node's compile cache, so that the next start needs neither type stripping nor compiling", async () => {
    const cache = mkdtempSync(path.join(tmpdir(), "gh-demo-cache-"));
    dirs.push(cache);
    const files = () => readdirSync(cache, { recursive: true }).length;
    const first = await run("npm", ["start", "--silent"], "hello\n", { TMPDIR: cache });
    expect(first.code).toBe(0);
    const written = files();
    // The start command, the engine, the store and the console channel at least.
    expect(written).toBeGreaterThan(50);
    const second = await run("npm", ["start", "--silent"], "hello\n", { TMPDIR: cache });
    expect(second.stdout).toMatch(/gatehouse › Hello!/);
    // Nothing new to compile: the second start read everything from the cache.
    expect(files()).toBe(written);
  }, 60_000);

  it("still stops with the clear error when a platform token is set", async () => {
    const result = await run(process.execPath, [path.join(REPO, "src/cli.ts"), "start"], "", { TELEGRAM_BOT_TOKEN: "123456:ABCdef" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("No model endpoint is configured.");
    expect(result.stderr).not.toContain("demo model");
  }, 60_000);
});
