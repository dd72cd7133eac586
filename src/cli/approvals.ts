/**
 * `gatehouse approvals <subcommand>`: the decision log and what follows from it. Each subcommand is
 * one row of APPROVALS_SUBCOMMANDS, whose module loads only when it runs; a new subcommand is a new
 * row (and its lines in the `approvals` help text in help.ts).
 */

/** One subcommand: its usage line and how it runs (exit code: 0 done, 1 its check failed, 2 bad usage). */
export interface ApprovalsSubcommand {
  usage: string;
  run(argv: string[]): Promise<number>;
}

/** The subcommands, by name. */
export const APPROVALS_SUBCOMMANDS: Record<string, ApprovalsSubcommand> = {
  list: {
    usage: "list [--tool T] [--by U] [--since 7d] [--limit N] [--json]",
    run: async (argv) => (await import("./approvals-log.ts")).runApprovalsList(argv),
  },
  export: {
    usage: "export [--format jsonl|csv]",
    run: async (argv) => (await import("./approvals-log.ts")).runApprovalsExport(argv),
  },
  verify: {
    usage: "verify [--file EXPORT.jsonl]",
    run: async (argv) => (await import("./approvals-log.ts")).runApprovalsVerify(argv),
  },
  always: { usage: "always [--scope S] [--json] | always --revoke ID", run: async (argv) => (await import("./approvals-always.ts")).runApprovalsAlways(argv) },
  suggest: {
    usage: "suggest [--min N] [--no-mcp]",
    run: async (argv) => (await import("./approvals-suggest.ts")).runApprovalsSuggest(argv),
  },
};

/** The usage lines of every subcommand. */
export function approvalsUsage(): string {
  return `usage:\n${Object.values(APPROVALS_SUBCOMMANDS).map((s) => `  gatehouse approvals ${s.usage}\n`).join("")}`;
}

/** Runs `gatehouse approvals <subcommand> …`. */
export async function runApprovals(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const subcommand = name !== undefined && Object.hasOwn(APPROVALS_SUBCOMMANDS, name) ? APPROVALS_SUBCOMMANDS[name] : undefined;
  if (!subcommand) {
    process.stderr.write(`${name ? `gatehouse approvals: unknown subcommand "${name}"\n` : ""}${approvalsUsage()}See \`gatehouse approvals --help\`.\n`);
    return 2;
  }
  return subcommand.run(rest);
}
