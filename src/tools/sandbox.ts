/**
 * The shell's sandbox: bubblewrap (`bwrap`) where the machine has it. A command runs in new PID,
 * IPC, UTS and cgroup namespaces with every capability dropped; it sees the system folders read-only
 * (minus files that hold the machine's secrets), a fresh /proc that shows only its own processes, a
 * private /tmp and a HOME of its own on tmpfs, and the workspace as the only folder it can write. It
 * gets no variable of the bot's environment. Killing bwrap (SIGKILL) ends everything inside: with
 * --die-with-parent the namespace's first process dies, and the kernel kills the rest, setsid-ed
 * children included.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** Whether commands can be contained here, and by what. */
export type SandboxAvailability = { kind: "bubblewrap"; path: string } | { kind: "none"; reason: string };

/** HOME inside the sandbox: a tmpfs, outside the shared workspace, gone after each command. */
export const SANDBOX_HOME = "/home/gatehouse";
/** PATH inside the sandbox. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const SYSTEM_FOLDERS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** Files under /etc that hold the machine's secrets; replaced by an empty file. */
const SECRET_FILES = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/security/opasswd"];
/** Folders under /etc that hold private keys; replaced by an empty tmpfs. */
const SECRET_FOLDERS = ["/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d"];

let cached: SandboxAvailability | undefined;

function findOnPath(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/usr/local/bin", "/bin"];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Finds bubblewrap and checks, once per process, that it can really start a sandbox here (it may be
 * installed where user namespaces are disabled). The answer says why when there is none.
 */
export function detectSandbox(): SandboxAvailability {
  if (cached) return cached;
  if (process.platform !== "linux") return (cached = { kind: "none", reason: `bubblewrap needs Linux (this is ${process.platform})` });
  const bwrap = findOnPath("bwrap");
  if (!bwrap) return (cached = { kind: "none", reason: "bubblewrap (bwrap) is not installed: apt-get install bubblewrap" });
  const probe = spawnSync(bwrap, bubblewrapArgs({ workspace: realpathSync(tmpdir()), env: { PATH: SANDBOX_PATH } }, ["/bin/sh", "-c", "true"]), {
    env: { PATH: SANDBOX_PATH },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 5_000,
    encoding: "utf8",
  });
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || `exit ${String(probe.status)}`).trim().split("\n")[0];
    return (cached = { kind: "none", reason: `bubblewrap at ${bwrap} cannot start a sandbox here: ${why}` });
  }
  return (cached = { kind: "bubblewrap", path: bwrap });
}

/** What one sandboxed command gets. */
export interface SandboxSpec {
  /** The real path of the workspace: bound read-write at the same path, and the working folder. */
  workspace: string;
  /** The whole environment the command sees. */
  env: Record<string, string>;
  /** Paths to hide should they lie in a folder the sandbox shows (the bot's data folder, config, .env). */
  hide?: string[];
}

function isInside(folder: string, candidate: string): boolean {
  return candidate === folder || candidate.startsWith(`${folder}/`);
}

/** `--ro-bind /dev/null f` for a file, `--tmpfs d` for a folder; nothing for what does not exist. */
function masked(p: string): string[] {
  try {
    return lstatSync(p).isDirectory() ? ["--tmpfs", p] : lstatSync(p).isFile() ? ["--ro-bind", "/dev/null", p] : [];
  } catch {
    return [];
  }
}

/** The bwrap command line (without bwrap itself) that runs `command` inside the sandbox. */
export function bubblewrapArgs(spec: SandboxSpec, command: string[]): string[] {
  const args = [
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    "--ro-bind", "/usr", "/usr",
  ];
  const shown = ["/usr"];
  for (const folder of SYSTEM_FOLDERS) {
    if (!existsSync(folder)) continue;
    if (lstatSync(folder).isSymbolicLink()) args.push("--symlink", readlinkSync(folder), folder);
    else {
      args.push("--ro-bind", folder, folder);
      shown.push(folder);
    }
  }
  if (existsSync("/etc")) {
    args.push("--ro-bind", "/etc", "/etc");
    shown.push("/etc");
    for (const file of SECRET_FILES) args.push(...masked(file));
    for (const folder of SECRET_FOLDERS) args.push(...masked(folder));
  }
  for (const p of spec.hide ?? []) {
    const absolute = path.resolve(p);
    if (shown.some((folder) => isInside(folder, absolute)) && !isInside(absolute, spec.workspace)) args.push(...masked(absolute));
  }
  args.push(
    "--proc", "/proc", "--dev", "/dev",
    "--size", String(512 * 1024 * 1024), "--tmpfs", "/tmp",
    "--size", String(64 * 1024 * 1024), "--tmpfs", SANDBOX_HOME,
    "--bind", spec.workspace, spec.workspace,
    "--chdir", spec.workspace,
    "--clearenv",
  );
  for (const [name, value] of Object.entries(spec.env)) args.push("--setenv", name, value);
  return [...args, "--", ...command];
}
