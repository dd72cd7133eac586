/**
 * Opens a file or folder inside the workspace in one step, so nothing can be swapped in between a
 * check and the open. The path is walked one component at a time, each opened relative to the
 * folder opened before it (`/proc/self/fd/<fd>/<name>`: Linux's name for "inside this open
 * folder"), and no component is ever followed as a symbolic link by the kernel: a link is read and
 * its target walked the same way (from the workspace root when it is absolute), so a link that
 * leads out is refused wherever it sits, and a folder replaced by a link mid-walk is seen as one.
 *
 * What was opened is then judged on its descriptor: only a regular file with a single link is read
 * or written (a hard link may be a file from outside; a FIFO or device could block or leak), and
 * files are opened with O_NONBLOCK so that refusing a FIFO never waits for a writer. Finally the
 * descriptor's real path is checked to lie in the workspace.
 *
 * Where /proc is missing (not Linux), the path is resolved first and opened with O_NOFOLLOW: the
 * final component cannot be a link, but a folder swapped during the call is not caught.
 */
import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, readlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { resolveWorkspacePath, workspaceRoot, WorkspacePathError } from "./workspace-path.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
const HAS_PROC_FD = existsSync("/proc/self/fd");
const MAX_LINK_HOPS = 40;
/** How often a component that changed between look and open is looked at again. */
const MAX_RETRIES = 16;

/** How a file is opened: to read, to replace its content, or to append to it. */
export type FileMode = "read" | "write" | "append";

/** An open file inside the workspace. */
export interface WorkspaceFile {
  handle: FileHandle;
  /** Where it really is, relative to the workspace root (links resolved). */
  relative: string;
  size: number;
}

/** An open folder inside the workspace. */
export interface WorkspaceFolder {
  handle: FileHandle;
  /** A path that names this open folder (and `join(path, name)` an entry in it), whatever happens to its name. */
  path: string;
  relative: string;
}

function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

function escapes(userPath: string): WorkspacePathError {
  return new WorkspacePathError(`path escapes the workspace: ${userPath} (use a path inside the workspace folder)`);
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(message);
  err.code = code;
  return err;
}

function codeOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** The components of `userPath` below the root, `..` folded lexically as the old resolver did. */
function componentsOf(workspace: string, root: string, userPath: string): string[] {
  if (userPath.includes("\0")) throw new WorkspacePathError(`path contains a NUL character: ${JSON.stringify(userPath)}`);
  const given = userPath.trim() === "" ? "." : userPath;
  const configured = path.resolve(workspace);
  let lexical: string;
  if (!path.isAbsolute(given)) lexical = path.resolve(root, given);
  else {
    const absolute = path.resolve(given);
    const rel = path.relative(configured, absolute);
    lexical = rel === "" ? root : !rel.startsWith("..") && !path.isAbsolute(rel) ? path.join(root, rel) : absolute;
  }
  const rel = path.relative(root, lexical);
  if (rel === "") return [];
  if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) throw escapes(userPath);
  return rel.split(path.sep);
}

/** The components of an absolute link target below the root; undefined when it points elsewhere. */
function rootedTarget(target: string, root: string, configured: string): string[] | undefined {
  for (const base of [root, configured]) {
    if (target === base) return [];
    if (target.startsWith(`${base}/`)) return target.slice(base.length + 1).split("/");
  }
  return undefined;
}

async function isLink(where: string): Promise<boolean> {
  return lstat(where).then((s) => s.isSymbolicLink(), () => false);
}

interface Walked {
  handle: FileHandle;
  names: string[];
}

/**
 * Walks `userPath` from the root and opens its last component with `openLast` (given the path of
 * that component inside its open parent). Intermediate folders are created when `createFolders`.
 */
async function walk(
  workspace: string,
  userPath: string,
  createFolders: boolean,
  openLast: (where: string) => Promise<FileHandle>,
): Promise<Walked> {
  const root = await workspaceRoot(workspace);
  const configured = path.resolve(workspace);
  const queue = componentsOf(workspace, root, userPath);
  const stack: Array<{ handle: FileHandle; name: string }> = [];
  const rootHandle = await open(root, O_RDONLY | O_DIRECTORY);
  const top = () => stack[stack.length - 1]?.handle ?? rootHandle;
  let hops = 0;
  let retries = 0;
  try {
    if (queue.length === 0) return { handle: await openLast(fdPath(rootHandle.fd, ".")), names: [] };
    while (queue.length) {
      const name = queue.shift()!;
      if (name === "" || name === ".") {
        if (queue.length) continue;
        return { handle: await openLast(fdPath(top().fd, ".")), names: stack.map((e) => e.name) };
      }
      if (name === "..") {
        if (stack.length === 0) throw escapes(userPath);
        await stack.pop()!.handle.close();
        if (queue.length === 0) return { handle: await openLast(fdPath(top().fd, ".")), names: stack.map((e) => e.name) };
        continue;
      }
      const here = fdPath(top().fd, name);
      const info = await lstat(here).catch((err: unknown) => {
        if (codeOf(err) === "ENOENT") return undefined;
        throw err;
      });
      if (info?.isSymbolicLink()) {
        if (++hops > MAX_LINK_HOPS) throw new WorkspacePathError(`too many levels of symbolic links: ${userPath}`);
        const target = await readlink(here);
        if (path.isAbsolute(target)) {
          const inside = rootedTarget(target, root, configured);
          if (!inside) throw escapes(userPath);
          for (const entry of stack.splice(0)) await entry.handle.close();
          queue.unshift(...inside);
        } else queue.unshift(...target.split("/"));
        if (queue.length === 0) queue.push(".");
        continue;
      }
      try {
        if (queue.length === 0) return { handle: await openLast(here), names: [...stack.map((e) => e.name), name] };
        if (!info && createFolders) await mkdir(here).catch((err: unknown) => (codeOf(err) === "EEXIST" ? undefined : Promise.reject(err)));
        stack.push({ handle: await open(here, O_RDONLY | O_DIRECTORY | O_NOFOLLOW), name });
      } catch (err) {
        // The entry changed between the look and the open (now a link, or created meanwhile): look again.
        const code = codeOf(err);
        const changed = code === "ELOOP" || code === "EEXIST" || (code === "ENOTDIR" && (await isLink(here)));
        if (!changed || ++retries > MAX_RETRIES) throw err;
        queue.unshift(name);
      }
    }
    throw new WorkspacePathError(`could not open ${userPath}`);
  } finally {
    for (const entry of stack.splice(0)) await entry.handle.close();
    await rootHandle.close();
  }
}

/** Refuses what is not a regular, singly linked file inside the workspace; closes it when refusing. */
async function judge(handle: FileHandle, shown: string, root: string, expect: "file" | "folder"): Promise<number> {
  try {
    const info = await handle.stat();
    if (expect === "folder") {
      if (!info.isDirectory()) throw errno("ENOTDIR", `${shown} is not a folder`);
    } else {
      if (info.isDirectory()) throw errno("EISDIR", `${shown} is a folder`);
      if (!info.isFile()) {
        throw new WorkspacePathError(`${shown} is not a regular file (a FIFO, device or socket); only regular files can be read or written`);
      }
      if (info.nlink > 1) {
        throw new WorkspacePathError(`${shown} has ${info.nlink} hard links; a file with more than one link is refused, since another name of it may lie outside the workspace`);
      }
    }
    if (HAS_PROC_FD) {
      const real = await readlink(fdPath(handle.fd));
      if (real !== root && !real.startsWith(`${root}/`)) throw escapes(shown);
    }
    return info.size;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

function fileFlags(mode: FileMode): number {
  if (mode === "read") return O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
  return O_WRONLY | O_NOFOLLOW | O_NONBLOCK | (mode === "append" ? O_APPEND : 0);
}

/** Opens a file for `mode`, creating it (and missing folders) for writing. `write` empties it once it passed every check. */
export async function openWorkspaceFile(workspace: string, userPath: string, mode: FileMode): Promise<WorkspaceFile> {
  const root = await workspaceRoot(workspace);
  const flags = fileFlags(mode);
  const openLast = async (where: string): Promise<FileHandle> => {
    try {
      return await open(where, flags);
    } catch (err) {
      if (codeOf(err) === "ENXIO") throw new WorkspacePathError(`${userPath} is not a regular file (a FIFO, device or socket); only regular files can be read or written`);
      if (mode === "read" || codeOf(err) !== "ENOENT") throw err;
      return open(where, flags | O_CREAT | O_EXCL, 0o644);
    }
  };
  let handle: FileHandle;
  let names: string[];
  if (HAS_PROC_FD) ({ handle, names } = await walk(workspace, userPath, mode !== "read", openLast));
  else {
    const resolved = await resolveWorkspacePath(workspace, userPath);
    if (mode !== "read") await mkdir(path.dirname(resolved.absolute), { recursive: true });
    handle = await openLast(resolved.absolute);
    names = resolved.relative === "." ? [] : resolved.relative.split(path.sep);
  }
  const size = await judge(handle, userPath, root, "file");
  if (mode === "write") await handle.truncate(0);
  return { handle, relative: names.join(path.sep) || ".", size: mode === "write" ? 0 : size };
}

/** Opens a folder of the workspace to list it. */
export async function openWorkspaceFolder(workspace: string, userPath: string): Promise<WorkspaceFolder> {
  const root = await workspaceRoot(workspace);
  const openLast = (where: string) => open(where, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (!HAS_PROC_FD) {
    const resolved = await resolveWorkspacePath(workspace, userPath);
    const handle = await openLast(resolved.absolute);
    await judge(handle, userPath, root, "folder");
    return { handle, path: resolved.absolute, relative: resolved.relative };
  }
  const { handle, names } = await walk(workspace, userPath, false, openLast);
  await judge(handle, userPath, root, "folder");
  return { handle, path: fdPath(handle.fd), relative: names.join(path.sep) || "." };
}
