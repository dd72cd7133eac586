/**
 * The doctor's checks of what contains the tools: the workspace kept apart from the bot's own files
 * (the bot refuses to start otherwise), whether the shell can be sandboxed here, and which hosts
 * `http_fetch` reaches without asking.
 */
import type { Config } from "../config/schema.ts";
import { workspaceIsolationProblems } from "../config/workspace-isolation.ts";
import { shellContainment } from "../tools/builtin/shell.ts";
import { finding, type Finding } from "./findings.ts";

/** Findings about the tools' containment, for `gatehouse doctor`. */
export function containmentChecks(config: Config, options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Finding[] {
  const out: Finding[] = [];
  for (const problem of workspaceIsolationProblems(config, options)) {
    const [message, fix] = problem.replace(/^GATEHOUSE_WORKSPACE \(workspace\): /, "").split(" Fix: ");
    out.push(finding("fatal", "GATEHOUSE_WORKSPACE (workspace)", `${message!} The bot refuses to start.`, fix));
  }
  const sandbox = shellContainment(config.shell);
  if (sandbox.kind === "bubblewrap") {
    out.push(finding("ok", "shell sandbox", `bubblewrap (${sandbox.path}): commands see only the workspace as writable, no bot process or environment`));
  } else if (config.shell.allowUnsandboxed) {
    out.push(finding("warn", "shell sandbox", `none: ${sandbox.reason}; shell.allowUnsandboxed is true, so commands run on this machine as the bot's user, for everyone tools.elevated allows`,
      "install bubblewrap (apt-get install bubblewrap), or set shell.allowUnsandboxed to false to keep the shell on the console"));
  } else {
    out.push(finding("warn", "shell sandbox", `none: ${sandbox.reason}; the shell is offered on the console only`,
      "install bubblewrap (apt-get install bubblewrap) to offer it to people tools.elevated allows on Slack, Discord or Telegram"));
  }
  const hosts = config.http.allowHosts;
  out.push(finding("note", "http_fetch", hosts.length
    ? `asks a person before each fetch except to ${hosts.join(", ")} (http.allowHosts)`
    : "asks a person before every fetch (a URL can carry data out); list hosts it may reach without asking in http.allowHosts"));
  return out;
}
