/**
 * `shell`: runs a command with `/bin/sh -c` in the workspace. Where the machine has bubblewrap the
 * command runs in a sandbox (see sandbox.ts): its own PID namespace and /proc, the system folders
 * read-only, the workspace the only folder it can write, a HOME of its own, and no variable of the
 * bot's environment; a timeout or a cancelled turn kills the whole sandbox. Without one, the
 * command gets a clean environment and a fresh HOME outside the workspace, and runs in its own
 * process group, which is killed on timeout or cancel (a child that leaves the group with setsid
 * survives that: only the sandbox contains it). The unsandboxed shell is offered on the console
 * only, unless `allowUnsandboxed` says otherwise. Output is capped head and tail.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import type { Tool, ToolResult } from "../tool.ts";
import { failed, succeeded } from "../result.ts";
import { HeadTailBuffer } from "../output-cap.ts";
import { bubblewrapArgs, detectSandbox, SANDBOX_HOME, SANDBOX_PATH, type SandboxAvailability } from "../sandbox.ts";
import { workspaceFor, workspaceRoot } from "../workspace-path.ts";
import { scrubSecrets } from "../../observe/scrub.ts";

/** Options of `shell`. */
export interface ShellOptions {
  /** Used when the call's context names no workspace. */
  workspace?: string;
  /** Default time a command may run (default 60 s). */
  timeoutMs?: number;
  /** The longest time a call may ask for (default 10 min). */
  maxTimeoutMs?: number;
  /** The most output characters returned, head and tail (default 30,000). */
  maxOutputChars?: number;
  /** PATH for commands; a standard system PATH in the sandbox, the bot's own PATH without one. */
  path?: string;
  /** "auto" (default): the bubblewrap sandbox when the machine has one; "off": never sandbox. */
  sandbox?: "auto" | "off";
  /** Offer the shell beyond the console even where commands cannot be sandboxed (default false). */
  allowUnsandboxed?: boolean;
  /** Paths the sandbox hides should a system folder it shows hold them (the data folder, config file, .env). */
  hidePaths?: string[];
}

const parameters = z.object({
  command: z.string().min(1).describe("the command line, run by /bin/sh -c in the workspace folder"),
  timeoutSeconds: z.number().positive().optional().describe("how long the command may run before it is killed"),
});

/** Arguments of `shell`. */
export type ShellArgs = z.infer<typeof parameters>;

/** Variable names never handed to a command, even if a future option adds variables. */
export const SECRET_ENV_NAME = /TOKEN|KEY|SECRET|PASSWORD/i;

/** The only environment a command sees: PATH, HOME (never the shared workspace), LANG and TERM. */
export function commandEnvironment(home: string, pathVar: string): Record<string, string> {
  const env: Record<string, string> = { PATH: pathVar, HOME: home, LANG: process.env.LANG ?? "C.UTF-8", TERM: "dumb" };
  for (const name of Object.keys(env)) if (SECRET_ENV_NAME.test(name)) delete env[name];
  return env;
}

/** Whether this shell's commands are contained, and the reason when they are not. */
export function shellContainment(options: Pick<ShellOptions, "sandbox"> = {}): SandboxAvailability {
  return options.sandbox === "off" ? { kind: "none", reason: "shell.sandbox is off" } : detectSandbox();
}

/** Creates the `shell` tool. */
export function shellTool(options: ShellOptions = {}): Tool<ShellArgs> {
  const defaultTimeout = options.timeoutMs ?? 60_000;
  const maxTimeout = options.maxTimeoutMs ?? 600_000;
  const maxOutput = options.maxOutputChars ?? 30_000;
  const containment = shellContainment(options);
  const sandboxed = containment.kind === "bubblewrap";
  return {
    name: "shell",
    description: `Runs a shell command (/bin/sh -c) in the workspace folder and returns its combined output and exit code. Killed after ${Math.round(defaultTimeout / 1000)} s unless timeoutSeconds says otherwise; background processes it started are stopped when it ends.${sandboxed ? " It runs in a sandbox: only the workspace is writable, and HOME is a temporary folder." : ""}`,
    parameters,
    risk: "exec",
    owner: "builtin",
    ...(containment.kind === "none" && !options.allowUnsandboxed
      ? { localOnly: `shell has no sandbox here (${containment.reason}); it is offered on the console only unless shell.allowUnsandboxed is true` }
      : {}),
    // Secrets are masked before the cut: a token cut in half no longer looks like one.
    hint: (args) => {
      const command = scrubSecrets(args.command).replace(/\s+/g, " ");
      return command.length > 60 ? `${command.slice(0, 59)}…` : command;
    },
    async execute(args, ctx) {
      if (ctx.signal.aborted) return failed("cancelled before the command started");
      const cwd = await workspaceRoot(workspaceFor(ctx, options.workspace));
      const timeoutMs = Math.min(args.timeoutSeconds !== undefined ? args.timeoutSeconds * 1000 : defaultTimeout, maxTimeout);
      const run = { cwd, timeoutMs, maxOutput, signal: ctx.signal };
      if (containment.kind === "bubblewrap") {
        const env = commandEnvironment(SANDBOX_HOME, options.path ?? SANDBOX_PATH);
        const argv = bubblewrapArgs({ workspace: cwd, env, hide: options.hidePaths }, ["/bin/sh", "-c", args.command]);
        // bwrap's own environment is readable inside (/proc/1/environ): it gets only the command's.
        return runCommand(containment.path, argv, { ...run, env });
      }
      const home = await mkdtemp(path.join(tmpdir(), "gatehouse-home-"));
      try {
        const env = commandEnvironment(home, options.path ?? process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin");
        return await runCommand("/bin/sh", ["-c", args.command], { ...run, env });
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },
  };
}

interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutput: number;
  signal: AbortSignal;
}

/** After the group is killed, output still buffered in pipes gets this long to arrive. */
const DRAIN_MS = 500;

function runCommand(file: string, argv: string[], run: RunOptions): Promise<ToolResult> {
  return new Promise((resolve) => {
    const output = new HeadTailBuffer(run.maxOutput);
    const child = spawn(file, argv, {
      cwd: run.cwd,
      env: run.env,
      detached: true, // its own process group, so kill(-pid) reaches every descendant (and bwrap, whose death ends its sandbox)
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stopped: "timeout" | "cancelled" | undefined;
    let settled = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const stop = (why: "timeout" | "cancelled") => {
      stopped ??= why;
      killGroup();
      // A descendant that left the group could hold the pipes open; do not wait for it.
      setTimeout(() => finish(null, "SIGKILL"), DRAIN_MS).unref();
    };
    const timer = setTimeout(() => stop("timeout"), run.timeoutMs);
    const onAbort = () => stop("cancelled");
    run.signal.addEventListener("abort", onAbort, { once: true });

    child.stdout.setEncoding("utf8").on("data", (s: string) => output.push(s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => output.push(s));

    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal.removeEventListener("abort", onAbort);
      killGroup(); // leftovers running in the background must not outlive the call
      const text = output.toString();
      if (spawnError) return resolve(failed(`could not start ${file}: ${spawnError.message}`));
      if (stopped === "timeout") {
        return resolve(failed(`timed out after ${run.timeoutMs / 1000} s; the command was killed`, withStatus(text, "killed: timeout")));
      }
      if (stopped === "cancelled") return resolve(failed("cancelled; the command was killed", withStatus(text, "killed: cancelled")));
      if (code === 0) return resolve(succeeded(withStatus(text, "exit code 0")));
      const status = code === null ? `killed by ${signal}` : `exit code ${code}`;
      resolve(failed(status, withStatus(text, status)));
    };
    child.on("error", (err) => finish(null, null, err));
    child.on("close", (code, signal) => finish(code, signal));
  });
}

function withStatus(text: string, status: string): string {
  const body = text.replace(/\n$/, "");
  return body ? `${body}\n[${status}]` : `[${status}]`;
}
