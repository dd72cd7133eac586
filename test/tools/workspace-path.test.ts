import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveWorkspacePath } from "../../src/tools/workspace-path.ts";
import { makeSandbox } from "./context.ts";

let box: Awaited<ReturnType<typeof makeSandbox>>;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

describe("resolveWorkspacePath", () => {
  it("resolves a relative path inside the workspace, even one that does not exist yet", async () => {
    const resolved = await resolveWorkspacePath(box.workspace, "notes/new/today.md");
    expect(resolved.relative).toBe(path.join("notes", "new", "today.md"));
    expect(resolved.absolute.endsWith(path.join("workspace", "notes", "new", "today.md"))).toBe(true);
  });

  it("accepts an absolute path that lies inside the workspace", async () => {
    const resolved = await resolveWorkspacePath(box.workspace, path.join(box.workspace, "a.txt"));
    expect(resolved.relative).toBe("a.txt");
  });

  it("accepts .. that stays inside the workspace", async () => {
    const resolved = await resolveWorkspacePath(box.workspace, "docs/../a.txt");
    expect(resolved.relative).toBe("a.txt");
  });

  it("refuses a ../ escape", async () => {
    await expect(resolveWorkspacePath(box.workspace, "../outside/x.txt")).rejects.toThrow("path escapes the workspace: ../outside/x.txt");
  });

  it("refuses an absolute path outside the workspace", async () => {
    await expect(resolveWorkspacePath(box.workspace, "/etc/passwd")).rejects.toThrow("path escapes the workspace: /etc/passwd");
  });

  it("refuses a symlink that points to /etc", async () => {
    await symlink("/etc", path.join(box.workspace, "etc-link"));
    await expect(resolveWorkspacePath(box.workspace, "etc-link/passwd")).rejects.toThrow(/path escapes the workspace/);
    await expect(resolveWorkspacePath(box.workspace, "etc-link")).rejects.toThrow(/path escapes the workspace/);
  });

  it("refuses a new file under a symlinked parent folder that points outside", async () => {
    await mkdir(path.join(box.workspace, "a"));
    await symlink(box.outside, path.join(box.workspace, "a", "out"));
    await expect(resolveWorkspacePath(box.workspace, "a/out/deeper/new.txt")).rejects.toThrow(/path escapes the workspace/);
  });

  it("refuses a symlinked final file that points outside", async () => {
    await writeFile(path.join(box.outside, "secret.txt"), "s3cret");
    await symlink(path.join(box.outside, "secret.txt"), path.join(box.workspace, "innocent.txt"));
    await expect(resolveWorkspacePath(box.workspace, "innocent.txt")).rejects.toThrow(/path escapes the workspace/);
  });

  it("refuses a dangling symlink whose missing target lies outside", async () => {
    await symlink(path.join(box.outside, "not-yet.txt"), path.join(box.workspace, "trap.txt"));
    await expect(resolveWorkspacePath(box.workspace, "trap.txt")).rejects.toThrow(/path escapes the workspace/);
  });

  it("allows a symlink that stays inside the workspace", async () => {
    await mkdir(path.join(box.workspace, "real"));
    await symlink(path.join(box.workspace, "real"), path.join(box.workspace, "alias"));
    const resolved = await resolveWorkspacePath(box.workspace, "alias/file.txt");
    expect(resolved.relative).toBe(path.join("real", "file.txt"));
  });

  it("works when the workspace itself is reached through a symlink", async () => {
    const linked = path.join(box.base, "ws-link");
    await symlink(box.workspace, linked);
    expect((await resolveWorkspacePath(linked, "x.txt")).relative).toBe("x.txt");
    expect((await resolveWorkspacePath(linked, path.join(linked, "x.txt"))).relative).toBe("x.txt");
    await expect(resolveWorkspacePath(linked, "../outside")).rejects.toThrow(/path escapes the workspace/);
  });
});
