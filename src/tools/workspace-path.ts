/**
 * Confines file paths to the workspace folder. A path given by the model is resolved
 * against the workspace and refused when it leaves it — by being absolute elsewhere, by
 * `..`, or through a symbolic link at any level (a link folder, a link file, or a link that
 * points to a file that does not exist yet).
 */
import { lstat, mkdir, readlink, realpath } from "node:fs/promises";
import path from "node:path";

/** A path the tools may not touch; the message is fit to show the model and the user. */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkspacePathError";
  }
}

/** A path inside the workspace: where it really is on disk, and how to show it. */
export interface WorkspacePath {
  /** The real absolute path (symbolic links resolved), to read or write. */
  absolute: string;
  /** The path relative to the workspace root, for messages ("." for the root itself). */
  relative: string;
  /** The real path of the workspace root. */
  root: string;
}

/** Creates the workspace folder if needed and returns its real path. */
export async function workspaceRoot(workspace: string): Promise<string> {
  await mkdir(workspace, { recursive: true });
  return realpath(workspace);
}

/**
 * Resolves `userPath` inside `workspace`, following symbolic links, and throws
 * WorkspacePathError ("path escapes the workspace: …") when the real target lies outside.
 * The file itself need not exist, so the result can be used to create it.
 */
export async function resolveWorkspacePath(workspace: string, userPath: string): Promise<WorkspacePath> {
  if (userPath.includes("\0")) throw new WorkspacePathError(`path contains a NUL character: ${JSON.stringify(userPath)}`);
  const root = await workspaceRoot(workspace);
  const given = userPath.trim() === "" ? "." : userPath;
  const lexical = path.isAbsolute(given) ? mapAbsolute(path.resolve(given), path.resolve(workspace), root) : path.resolve(root, given);
  if (!isInside(root, lexical)) throw escapes(userPath);
  const real = await realTarget(lexical);
  if (!isInside(root, real)) throw escapes(userPath);
  return { absolute: real, relative: path.relative(root, real) || ".", root };
}

function escapes(userPath: string): WorkspacePathError {
  return new WorkspacePathError(`path escapes the workspace: ${userPath} (use a path inside the workspace folder)`);
}

/** An absolute path spelled with the configured workspace name is rebased onto its real path. */
function mapAbsolute(absolute: string, configured: string, root: string): string {
  if (absolute !== configured && isInside(configured, absolute)) return path.join(root, path.relative(configured, absolute));
  return absolute === configured ? root : absolute;
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
}

const MAX_LINK_HOPS = 40;

/**
 * The real path `p` refers to, even when it does not exist yet: the deepest existing
 * ancestor is resolved and the rest appended; a dangling link is followed to its target,
 * because writing through it would create that target.
 */
async function realTarget(p: string, hops = 0): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw new WorkspacePathError(`too many levels of symbolic links: ${p}`);
  try {
    return await realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new WorkspacePathError(`too many levels of symbolic links: ${p}`);
    if (!isMissing(err)) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await realTarget(parent, hops);
  const here = path.join(realParent, path.basename(p));
  const stat = await lstat(here).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    const target = path.resolve(realParent, await readlink(here));
    return realTarget(target, hops + 1);
  }
  return here;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** The folder a call is confined to: the turn's workspace, else the one the tool was built with. */
export function workspaceFor(ctx: { workspace: string }, fallback: string | undefined): string {
  const chosen = ctx.workspace || fallback;
  if (!chosen) throw new WorkspacePathError("no workspace folder is configured (set GATEHOUSE_WORKSPACE)");
  return chosen;
}
