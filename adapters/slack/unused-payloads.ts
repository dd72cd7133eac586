/**
 * Payloads the app does not use — modal submissions and closes, shortcuts, select-menu
 * option requests, slash commands with another name — are acknowledged and dropped here, so
 * Slack never shows the person an error for a request nobody answered and Bolt never reports
 * an unhandled request.
 */
import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import type { Logger } from "pino";
import { slashCommandUsage } from "./slash-command.ts";

/** Which of Bolt's payload kinds a body is, as far as this middleware cares. */
function unusedKind(args: AnyMiddlewareArgs, commandName: string): string | undefined {
  if ("view" in args) return "view";
  if ("shortcut" in args) return "shortcut";
  if ("options" in args) return "options";
  if ("command" in args && args.command?.command !== commandName) return "other command";
  return undefined;
}

/**
 * Global middleware: acks what no listener of the adapter handles (a slash command under
 * another name gets the usage of ours), and passes everything else on.
 */
export function ackUnusedPayloads(commandName: string, log: Logger): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    const kind = unusedKind(args, commandName);
    if (!kind) return args.next();
    const type = (args.body as { type?: unknown }).type;
    log.debug({ kind, type: typeof type === "string" ? type : undefined }, "payload the app does not use acknowledged and ignored");
    // Every kind that reaches here carries an ack (only Events API payloads lack one).
    const ack = (args as { ack?: (response?: unknown) => Promise<void> }).ack;
    try {
      await ack?.(kind === "other command" ? { response_type: "ephemeral", text: slashCommandUsage(commandName) } : undefined);
    } catch (err) {
      log.warn({ err: String(err), kind }, "could not acknowledge an unused payload");
    }
  };
}
