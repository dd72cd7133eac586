import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { RuntimeStatus, type StatusSnapshot } from "../../src/observe/runtime-status.ts";
import { createObserver } from "../../src/observe/observer.ts";
import { silentLogger } from "../../src/observe/logger.ts";

let dataDir: string | undefined;
afterEach(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe("the status snapshot's session count", () => {
  it("counts each session once, however many turns it has", () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "gh-status-"));
    const observer = createObserver(silentLogger());
    const status = new RuntimeStatus(dataDir, observer);
    for (const sessionKey of ["s1", "s2", "s1", "s3", "s2"]) observer.emit({ event: "turn.start", sessionKey });
    for (let i = 0; i < 20_000; i++) observer.emit({ event: "turn.start", sessionKey: `many-${i}` });
    status.started({ channels: [], model: "m", gateway: { status: () => ({ runningTurns: 0, pendingApprovals: 0 }) }, mcp: { status: () => [] } });
    const snapshot = JSON.parse(readFileSync(path.join(dataDir, "status.json"), "utf8")) as StatusSnapshot;
    status.stopped();
    expect(snapshot.sessionsSeen).toBe(20_003);
  });
});
