/**
 * Payloads the app does not use — modal submissions (other than the deny-with-reason modal's)
 * and closes, shortcuts, select-menu option requests, slash commands with another name, legacy
 * attachment buttons and dialogs (`interactive_message`, `dialog_submission`,
 * `dialog_cancellation`), and `function_executed`
 * events of workflow steps — are acknowledged and dropped here, so every envelope is acked within
 * Slack's 3 s, Slack never shows the person an error for a request nobody answered, and Bolt
 * never reports an unhandled request.
 */
import type { AnyMiddlewareArgs, App, Middleware } from "@slack/bolt";
import type { Logger } from "pino";
import { slashCommandUsage } from "./slash-command.ts";
import { REASON_MODAL_CALLBACK } from "./reason-modal.ts";

/** Interactive payloads from before Block Kit: Bolt reads them as actions, but no listener of ours matches them. */
const LEGACY_ACTIONS = new Set(["interactive_message", "dialog_submission", "dialog_cancellation", "workflow_step_edit"]);

/** Which of Bolt's payload kinds a body is, as far as this middleware cares. */
function unusedKind(args: AnyMiddlewareArgs, commandName: string): string | undefined {
  const type = (args.body as { type?: unknown }).type;
  if ("action" in args && typeof type === "string" && LEGACY_ACTIONS.has(type)) return `legacy ${type}`;
  // Bolt leaves acknowledging these to the app (a workflow step it provides would `complete()` it).
  if ("event" in args && (args.event as { type?: unknown } | undefined)?.type === "function_executed") return "function_executed";
  if ("view" in args) return isReasonSubmission(args.body) ? undefined : "view";
  if ("shortcut" in args) return "shortcut";
  if ("options" in args) return "options";
  if ("command" in args && args.command?.command !== commandName) return "other command";
  return undefined;
}

/** A submission of the deny-with-reason modal, which the adapter's view listener answers. */
function isReasonSubmission(body: unknown): boolean {
  const b = body as { type?: unknown; view?: { callback_id?: unknown } };
  return b.type === "view_submission" && b.view?.callback_id === REASON_MODAL_CALLBACK;
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
    // Every kind that reaches here carries an ack (Events API payloads other than function_executed lack one).
    const ack = (args as { ack?: (response?: unknown) => Promise<void> }).ack;
    try {
      await ack?.(kind === "other command" ? { response_type: "ephemeral", text: slashCommandUsage(commandName) } : undefined);
    } catch (err) {
      log.warn({ err: String(err), kind }, "could not acknowledge an unused payload");
    }
  };
}

/**
 * Payloads Bolt cannot even classify (it warns and returns without acknowledging): a cancelled
 * legacy dialog, and the Events API's `app_rate_limited` notice.
 */
const UNTYPED = new Set(["dialog_cancellation", "app_rate_limited"]);

/** Makes `app` acknowledge the payloads Bolt would leave unanswered, before it looks at them. */
export function ackUntypedPayloads(app: App, log: Logger): void {
  const processEvent = app.processEvent.bind(app);
  app.processEvent = async (event) => {
    const type = (event.body as { type?: unknown } | undefined)?.type;
    if (typeof type !== "string" || !UNTYPED.has(type)) return processEvent(event);
    log.debug({ type }, "payload the app does not use acknowledged and ignored");
    await event.ack();
  };
}
