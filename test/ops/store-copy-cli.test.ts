import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { openPostgresStore } from "../../src/store/postgres-store.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { pending } from "../store/contract/index.ts";
import { usePostgresServer } from "../store/postgres-server.ts";
import { tempDataDir } from "../store/temp-dir.ts";
import { freePort } from "../support/free-port.ts";
import { runCli, type CliResult } from "./cli-run.ts";

const { freshDatabase } = usePostgresServer();

/** A data folder whose SQLite store holds a little of several kinds. */
async function dataFolder(): Promise<string> {
  const dataDir = tempDataDir();
  const store = await openSqliteStore({ dataDir });
  await store.appendHistory("slack:C1:171.2", [{ role: "user", content: "deploy" }, { role: "assistant", content: "Done." }]);
  await store.appendHistory("telegram:42", [{ role: "user", content: "hi" }]);
  await store.createApproval(pending("k3x9"));
  await store.appendAudit({ at: 1, kind: "approval", sessionKey: "slack:C1:171.2", outcome: "approved" });
  await store.rememberAlways("slack:C1", "shell", 1);
  await store.setValue("telegram.offset", "77");
  await store.close();
  return dataDir;
}

/** Runs `gatehouse store copy` from the data folder's parent, with only the environment given. */
function storeCopy(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(["store", "copy", ...args], env, { cwd: path.dirname(dataDir) });
}

const passwordOf = (url: string): string => new URL(url).password;

describe("gatehouse store copy", () => {
  it("copies the data folder's store into DATABASE_URL, prints what it copied, and never the password", async () => {
    const dataDir = await dataFolder();
    const url = await freshDatabase();
    const result = await storeCopy(dataDir, ["--from", dataDir], { DATABASE_URL: url });

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Copied ${path.join(dataDir, "gatehouse.db")} into postgres://postgres@127.0.0.1:`);
    expect(result.stdout).toMatch(/sessions:\s+2\n/);
    expect(result.stdout).toMatch(/history messages:\s+3\n/);
    expect(result.stdout).toMatch(/approvals:\s+1\n/);
    expect(result.stdout).toMatch(/audit entries:\s+1\n/);
    expect(result.stdout).toMatch(/Always rules:\s+1\n/);
    expect(result.stdout).toMatch(/values:\s+1\n/);
    expect(result.stdout).not.toContain(passwordOf(url));

    const copied = await openPostgresStore({ url });
    expect(await copied.loadHistory("slack:C1:171.2", 10)).toEqual([{ role: "user", content: "deploy" }, { role: "assistant", content: "Done." }]);
    expect(await copied.getApproval("k3x9")).toEqual(pending("k3x9"));
    expect(await copied.getValue("telegram.offset")).toBe("77");
    await copied.close();
  });

  it("refuses a second run, saying what the destination holds; --force then keeps it and copies nothing twice", async () => {
    const dataDir = await dataFolder();
    const url = await freshDatabase();
    expect((await storeCopy(dataDir, ["--from", dataDir, "--to", url])).code).toBe(0);

    const again = await storeCopy(dataDir, ["--from", dataDir, "--to", url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds 2 sessions, 3 history messages, 1 approval, 1 audit entry, 1 Always rule, 1 value; nothing was copied/);
    expect(again.stderr).toContain("--force");
    expect(again.stdout).toBe("");
    expect(again.stderr).not.toContain(passwordOf(url));

    const forced = await storeCopy(dataDir, ["--from", dataDir, "--force"], { DATABASE_URL: url });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/sessions:\s+0 {2}\(2 already there, kept\)/);
    expect(forced.stdout).toMatch(/audit entries:\s+0 {2}\(1 already there, kept\)/);
    const store = await openPostgresStore({ url });
    expect(await store.listAudit()).toHaveLength(1);
    await store.close();
  });

  it("explains what it copies and what it does not with --help", async () => {
    const result = await runCli(["store", "copy", "--help"], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("usage: gatehouse store copy --from <data dir>");
    expect(result.stdout).toMatch(/Not copied:\n\s+a session's history from before its last \/new/);
    expect(result.stdout).toContain("--force");
  });

  it("exits 2 for bad usage, naming what is wrong", async () => {
    const dataDir = await dataFolder();
    const url = await freshDatabase();
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [[], { DATABASE_URL: url }, /--from <data dir> is required/],
      [["--from", dataDir], {}, /no destination: set DATABASE_URL/],
      [["--from", dataDir, "--to", "mysql://root:hunter2@db/gatehouse"], {}, /--to must start with postgres:\/\//],
      [["--from", dataDir, "--into", url], {}, /Unknown option '--into'/],
      [["--from", dataDir, url], {}, /pass the database URL with --to/],
      [["--from"], {}, /argument missing/],
    ];
    for (const [args, env, message] of cases) {
      const result = await storeCopy(dataDir, args, env);
      expect(result.stderr, args.join(" ")).toMatch(message);
      expect(result.stderr).toContain("usage: gatehouse store copy");
      expect(result.stderr).not.toContain(passwordOf(url));
      expect(result.stderr).not.toContain("hunter2");
      expect(result.code).toBe(2);
    }
    expect((await runCli(["store", "move"], {})).code).toBe(2);
  });

  it("fails with 1 for a folder without a store, and for a database it cannot reach, without printing the password", async () => {
    const dataDir = await dataFolder();
    const empty = path.join(path.dirname(dataDir), "nothing-here");
    const noStore = await storeCopy(dataDir, ["--from", empty, "--to", await freshDatabase()]);
    expect(noStore.code).toBe(1);
    expect(noStore.stderr).toContain(`No Gatehouse store at ${path.join(empty, "gatehouse.db")}`);

    const unreachable = `postgres://gatehouse:s3cret-pw@127.0.0.1:${await freePort()}/gatehouse`;
    const down = await storeCopy(dataDir, ["--from", dataDir], { DATABASE_URL: unreachable });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/Cannot connect to the Gatehouse database at postgres:\/\/gatehouse@127\.0\.0\.1:\d+\/gatehouse/);
    expect(down.stderr).not.toContain("s3cret-pw");
  });

  it("refuses to copy while the bot is running on the data folder", async () => {
    const dataDir = await dataFolder();
    // This test's own process stands in for the bot: alive, and its status freshly written.
    writeFileSync(path.join(dataDir, "gatehouse.pid"), String(process.pid));
    writeFileSync(path.join(dataDir, "status.json"), JSON.stringify({ pid: process.pid, updatedAt: new Date().toISOString() }));
    const result = await storeCopy(dataDir, ["--from", dataDir], { DATABASE_URL: await freshDatabase() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The bot is running on ${dataDir} (pid ${process.pid}). Stop it first`);
  });
});
