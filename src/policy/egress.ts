/**
 * The egress rule for `http_fetch`: a GET carries whatever the model puts in its URL out of the
 * bot, so a prompt-injected model could read the workspace and send it away in a query string.
 * A fetch therefore asks a person unless the URL's host (and port, when the entry names one) is in
 * `http.allowHosts`, or the operator opted out explicitly (autonomy "full", or `http_fetch` listed
 * in `approval.autoApprove`). It is enforced as a built-in before_tool_call hook that runs after
 * every other hook, so it judges the URL that will really be fetched.
 */
import { hostInAllowList } from "../tools/network-guard.ts";
import { firstMatchingPattern } from "./glob.ts";
import type { HookRegistry } from "./hooks.ts";
import type { ApprovalConfig } from "./schema.ts";

/** What the rule needs: the hosts fetched without asking, and the approval settings that may lift it. */
export interface EgressRuleOptions {
  /** `http.allowHosts`; empty (the default) means every fetch asks. */
  allowHosts?: readonly string[];
  approval?: Pick<ApprovalConfig, "autonomy" | "autoApprove">;
}

/** The name the egress hook is registered under. */
export const EGRESS_HOOK = "builtin:http_fetch-egress";

const FETCH_TOOL = { name: "http_fetch", owner: "builtin" };

/** Whether the operator turned the rule off: autonomy "full", or http_fetch in approval.autoApprove. */
export function egressRuleLifted(options: EgressRuleOptions): string | undefined {
  const approval = options.approval;
  if (approval?.autonomy === "full") return 'autonomy "full"';
  const auto = approval ? firstMatchingPattern(approval.autoApprove, FETCH_TOOL) : undefined;
  return auto !== undefined ? `approval.autoApprove "${auto}"` : undefined;
}

/** Why a fetch of `url` needs a person; undefined when it may run unasked (or is no URL at all: the tool refuses it). */
export function fetchNeedsApproval(url: unknown, options: EgressRuleOptions): string | undefined {
  if (egressRuleLifted(options) || typeof url !== "string") return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (hostInAllowList(parsed, options.allowHosts ?? [])) return undefined;
  return `http_fetch to ${parsed.host} asks a person: the host is not in http.allowHosts`;
}

/** What `gatehouse explain` says of http_fetch's approval. */
export function describeEgressRule(options: EgressRuleOptions): string {
  const lifted = egressRuleLifted(options);
  if (lifted) return `never asks (${lifted})`;
  const hosts = options.allowHosts ?? [];
  return hosts.length ? `asks unless the URL's host is in http.allowHosts (${hosts.join(", ")})` : "asks before every fetch (http.allowHosts is empty)";
}

/** Registers the egress rule on a hook registry, after every other hook. */
export function registerEgressHook(registry: HookRegistry, options: EgressRuleOptions = {}): void {
  registry.onBeforeToolCall(
    EGRESS_HOOK,
    (call) => {
      const reason = fetchNeedsApproval(call.params.url, options);
      return reason ? { requireApproval: true, approvalReason: reason } : undefined;
    },
    { priority: Number.MIN_SAFE_INTEGER, appliesTo: (call) => call.tool === FETCH_TOOL.name && (call.owner ?? "builtin") === FETCH_TOOL.owner },
  );
}
