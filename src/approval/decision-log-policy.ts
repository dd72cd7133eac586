/**
 * Policy changes in the decision log: at every start the effective policy (everything in the
 * config that decides what runs without a person: `approval`, `tools`, `hooks`, the MCP servers'
 * risk settings, `shell.allowUnsandboxed`) is hashed and compared with the one the last start
 * recorded. When it differs, a `policy.changed` entry says what widened (autonomy raised,
 * autoApprove gained patterns, alwaysAsk lost patterns, approvers added…), narrowed or otherwise
 * changed, so that a config edit that lets more run unasked is in the log next to the decisions.
 */
import { createHash } from "node:crypto";
import type { Config } from "../config/schema.ts";
import { canonicalJson } from "../observe/canonical-json.ts";
import type { AuditEntry, Store } from "../store/store.ts";

/** The store value holding the last start's policy and its hash. */
export const POLICY_VALUE_KEY = "decision-log.policy";

/** The parts of the config that decide what runs without a person, as plain data. */
export function effectivePolicy(config: Pick<Config, "approval" | "tools" | "hooks" | "mcp" | "shell">): Record<string, unknown> {
  const mcpRisk = Object.fromEntries(
    Object.entries(config.mcp.servers).map(([name, s]) => [name, { risk: s.risk, toolRisk: s.toolRisk, readOnly: s.readOnly, readOnlyTools: s.readOnlyTools }]),
  );
  // Through JSON: the stored copy and this one must compare alike (undefined members dropped).
  return JSON.parse(JSON.stringify({ approval: config.approval, tools: config.tools, hooks: config.hooks, mcpRisk, shell: { allowUnsandboxed: config.shell.allowUnsandboxed } }));
}

/** sha256 hex of the policy's canonical JSON. */
export function policyHash(policy: unknown): string {
  return createHash("sha256").update(canonicalJson(policy)).digest("hex");
}

/** What differs between two policies, sorted by what it means for what runs unasked. */
export interface PolicyChanges {
  widened: string[];
  narrowed: string[];
  changed: string[];
}

type Plain = Record<string, unknown>;
const obj = (v: unknown): Plain => (v && typeof v === "object" && !Array.isArray(v) ? (v as Plain) : {});
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
const quoted = (items: string[]) => items.map((i) => JSON.stringify(i)).join(", ");

const AUTONOMY = ["readonly", "supervised", "full"];
const PROFILE = ["minimal", "messaging", "standard", "full"];
const ALWAYS_SCOPE = ["session", "conversation", "sender"];

/** The differences between the policy recorded before and the one now. */
export function policyChanges(before: unknown, after: unknown): PolicyChanges {
  const out: PolicyChanges = { widened: [], narrowed: [], changed: [] };
  const [a0, a1] = [obj(obj(before).approval), obj(obj(after).approval)];
  const [t0, t1] = [obj(obj(before).tools), obj(obj(after).tools)];
  const done = new Set<string>();

  const ranked = (key: string, scale: string[], was: unknown, now: unknown, grows: string) => {
    done.add(key);
    if (was === now) return;
    const [i, j] = [scale.indexOf(String(was)), scale.indexOf(String(now))];
    (j > i ? out.widened : out.narrowed).push(`${key} ${j > i ? grows : "lowered"} from ${String(was)} to ${String(now)}`);
  };
  // `wider` is the side whose added patterns let more run: autoApprove grows wider, alwaysAsk and deny narrower.
  const listed = (key: string, was: unknown, now: unknown, addingWidens: boolean) => {
    done.add(key);
    const [w, n] = [strings(was), strings(now)];
    const gained = n.filter((x) => !w.includes(x));
    const lost = w.filter((x) => !n.includes(x));
    if (gained.length) (addingWidens ? out.widened : out.narrowed).push(`${key} gained ${quoted(gained)}`);
    if (lost.length) (addingWidens ? out.narrowed : out.widened).push(`${key} lost ${quoted(lost)}`);
  };

  ranked("approval.autonomy", AUTONOMY, a0.autonomy, a1.autonomy, "raised");
  listed("approval.autoApprove", a0.autoApprove, a1.autoApprove, true);
  listed("approval.alwaysAsk", a0.alwaysAsk, a1.alwaysAsk, false);
  ranked("approval.alwaysScope", ALWAYS_SCOPE, a0.alwaysScope, a1.alwaysScope, "widened");
  done.add("approval.alwaysCoversOthers");
  if (a0.alwaysCoversOthers !== a1.alwaysCoversOthers) {
    (a1.alwaysCoversOthers ? out.widened : out.narrowed).push(`approval.alwaysCoversOthers turned ${a1.alwaysCoversOthers ? "on" : "off"}`);
  }
  done.add("approval.approvers");
  const [p0, p1] = [obj(a0.approvers), obj(a1.approvers)];
  for (const channel of new Set([...Object.keys(p0), ...Object.keys(p1)])) {
    const [w, n] = [strings(p0[channel]), strings(p1[channel])];
    const added = n.filter((x) => !w.includes(x));
    const removed = w.filter((x) => !n.includes(x));
    if (added.length) out.widened.push(`approvers added on ${channel}: ${added.join(", ")}`);
    if (removed.length) out.narrowed.push(`approvers removed on ${channel}: ${removed.join(", ")}`);
  }
  done.add("approval.rules");
  if (!same(a0.rules ?? [], a1.rules ?? [])) {
    out.changed.push(`approval.rules changed (${Array.isArray(a0.rules) ? a0.rules.length : 0} → ${Array.isArray(a1.rules) ? a1.rules.length : 0} rules)`);
  }

  ranked("tools.profile", PROFILE, t0.profile, t1.profile, "raised");
  listed("tools.deny", t0.deny, t1.deny, false);
  const [e0, e1] = [obj(t0.elevated), obj(t1.elevated)];
  done.add("tools.elevated");
  if (e0.enabled !== e1.enabled) (e1.enabled ? out.widened : out.narrowed).push(`tools.elevated.enabled turned ${e1.enabled ? "on" : "off"}`);
  listed("tools.elevated.allowFrom", e0.allowFrom, e1.allowFrom, true);

  const hooks = (v: unknown) => (Array.isArray(v) ? v.map((h) => canonicalJson(h)) : []);
  const [h0, h1] = [hooks(obj(before).hooks), hooks(obj(after).hooks)];
  const hooksRemoved = h0.filter((h) => !h1.includes(h)).length;
  const hooksAdded = h1.filter((h) => !h0.includes(h)).length;
  if (hooksRemoved) out.widened.push(`${hooksRemoved} ${hooksRemoved === 1 ? "hook" : "hooks"} removed or changed`);
  if (hooksAdded && !hooksRemoved) out.narrowed.push(`${hooksAdded} ${hooksAdded === 1 ? "hook" : "hooks"} added`);

  const [s0, s1] = [obj(obj(before).shell), obj(obj(after).shell)];
  if (s0.allowUnsandboxed !== s1.allowUnsandboxed) {
    (s1.allowUnsandboxed ? out.widened : out.narrowed).push(`shell.allowUnsandboxed turned ${s1.allowUnsandboxed ? "on" : "off"}`);
  }
  if (!same(obj(before).mcpRisk, obj(after).mcpRisk)) out.changed.push("MCP servers' risk settings changed");

  // Whatever else differs in approval and tools (timeouts, allow lists, per-sender rules…).
  for (const [prefix, was, now] of [["approval", a0, a1], ["tools", t0, t1]] as const) {
    for (const key of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (!done.has(`${prefix}.${key}`) && !same(was[key], now[key])) out.changed.push(`${prefix}.${key} changed`);
    }
  }
  return out;
}

/** "widened: …; … · narrowed: … · changed: …" */
export function describeChanges(changes: PolicyChanges): string {
  return (["widened", "narrowed", "changed"] as const)
    .filter((k) => changes[k].length)
    .map((k) => `${k}: ${changes[k].join("; ")}`)
    .join(" · ");
}

/**
 * At start: compares the effective policy with the one the last start recorded and, when it
 * differs (or none was recorded), appends a `policy.changed` entry and records this one. Returns
 * the entry, or undefined when the policy is the same.
 */
export async function recordPolicyAtStart(store: Store, config: Parameters<typeof effectivePolicy>[0], now = Date.now()): Promise<AuditEntry | undefined> {
  const policy = effectivePolicy(config);
  const hash = policyHash(policy);
  const previous = parseRecorded(await store.getValue(POLICY_VALUE_KEY));
  if (previous?.hash === hash) return undefined;
  let entry: AuditEntry;
  if (!previous) {
    entry = { at: now, kind: "policy.changed", source: "config", outcome: "recorded", detail: "no earlier policy on record: this start's policy is the baseline", reason: `policy ${hash}` };
  } else {
    const changes = policyChanges(previous.policy, policy);
    const outcome = changes.widened.length ? "widened" : changes.narrowed.length && !changes.changed.length ? "narrowed" : "changed";
    entry = {
      at: now, kind: "policy.changed", source: "config", outcome,
      detail: describeChanges(changes) || "the policy's form changed; nothing that decides what runs did",
      reason: `policy ${hash}, was ${previous.hash}`,
    };
  }
  await store.appendAudit(entry);
  await store.setValue(POLICY_VALUE_KEY, JSON.stringify({ hash, policy }));
  return entry;
}

function parseRecorded(value: string | undefined): { hash: string; policy: unknown } | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as { hash?: unknown; policy?: unknown };
    return typeof parsed.hash === "string" ? { hash: parsed.hash, policy: parsed.policy } : undefined;
  } catch {
    return undefined;
  }
}
