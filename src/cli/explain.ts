/**
 * `gatehouse explain --channel C --sender S [--conversation ID]`: every tool, whether it is
 * offered to that sender there, whether it needs approval, and which rule decided.
 */
import { loadConfig } from "../config/load.ts";
import { alwaysScopeKey, describeAlwaysScope } from "../policy/always-scope.ts";
import { explainPolicy, formatExplain } from "../policy/explain.ts";
import type { ToolDescriptor } from "../policy/tool-policy.ts";
import { shellContainment } from "../tools/builtin/shell.ts";
import { builtinTools } from "../tools/builtin/index.ts";
import { McpHub } from "../tools/mcp/hub.ts";
import { silentLogger } from "../observe/logger.ts";
import { openStore } from "../store/open-store.ts";
import { readArgs } from "./args.ts";

export async function runExplain(argv: string[]): Promise<number> {
  const { values } = readArgs(argv, {
    channel: { type: "string" },
    sender: { type: "string" },
    conversation: { type: "string" },
    "no-mcp": { type: "boolean" },
  });
  const channel = values.channel as string | undefined;
  const sender = values.sender as string | undefined;
  if (!channel || !sender) {
    process.stderr.write("usage: gatehouse explain --channel slack --sender U123 [--conversation C1] [--no-mcp]\n");
    return 2;
  }
  if (!["console", "slack", "discord", "telegram"].includes(channel)) {
    process.stderr.write(`unknown channel "${channel}": use console, slack, discord or telegram\n`);
    return 2;
  }
  const conversationId = values.conversation as string | undefined;
  const config = loadConfig();
  const tools = builtinTools({ workspace: config.workspace!, http: config.http, shell: config.shell });
  const descriptors: ToolDescriptor[] = tools.map((t) => ({ name: t.name, risk: t.risk, owner: t.owner, localOnly: t.localOnly }));
  if (!values["no-mcp"] && Object.keys(config.mcp.servers).length) {
    const hub = new McpHub(config.mcp, silentLogger());
    await hub.start();
    for (const t of hub.tools()) descriptors.push({ name: t.name, risk: t.risk, owner: t.owner });
    await hub.close();
  }
  // tool_search exists only with deferred MCP activation.
  if (config.mcp.deferred && Object.keys(config.mcp.servers).length) descriptors.push({ name: "tool_search", risk: "read", owner: "builtin" });
  const remembered = new Set<string>();
  if (conversationId) {
    const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    const scope = alwaysScopeKey(config.approval, { channel, senderId: sender, conversationId, sessionKey: `${channel}:${conversationId}` });
    for (const d of descriptors) if (await store.hasAlways(scope, d.name)) remembered.add(d.name);
    await store.close();
  }
  const rows = explainPolicy(config.tools, config.approval, descriptors, { channel, senderId: sender, conversationId }, remembered, config.http);
  const sandbox = shellContainment(config.shell);
  const notes = [
    sandbox.kind === "bubblewrap"
      ? `shell: runs in the bubblewrap sandbox (${sandbox.path})`
      : `shell: NO SANDBOX here (${sandbox.reason}); ${config.shell.allowUnsandboxed ? "shell.allowUnsandboxed is true: commands run unsandboxed" : "offered on the console only"}`,
    `"Always" holds for ${describeAlwaysScope(config.approval)}`,
  ];
  process.stdout.write(`Tools for ${channel}:${sender}${conversationId ? ` in ${conversationId}` : ""}:\n\n${formatExplain(rows)}\n\n${notes.join("\n")}\n`);
  return 0;
}
