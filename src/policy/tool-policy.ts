/**
 * The tool policy: whether a tool is offered to the model for a given sender and
 * conversation, and what approval a call of it needs. Pure functions of the config; each
 * answer names the rule that decided it, for `gatehouse explain` and for refusal messages.
 * How the layers combine is documented in schema.ts.
 */
import type { ToolRisk } from "../tools/tool.ts";
import { firstMatchingPattern, globMatches } from "./glob.ts";
import { PROFILE_TOOLS, type ApprovalConfig, type SenderRule, type ToolPolicyConfig, type ToolProfile } from "./schema.ts";

/** Who is asking, and where. */
export interface PolicySubject {
  channel: string;
  senderId: string;
  conversationId?: string;
}

/** What the policy needs to know about a tool. */
export interface ToolDescriptor {
  name: string;
  risk: ToolRisk;
  /** `builtin` or `mcp:<server>`. */
  owner: string;
  /** Offered on the console only, for this reason (see Tool.localOnly). */
  localOnly?: string;
}

/** Whether a tool is offered, and the rule that decided. */
export interface Availability {
  offered: boolean;
  rule: string;
}

/** How a call must be approved. */
export type ApprovalRequirement = "not-required" | "approved-by-policy" | "prompt";

/** The approval a call needs, and the rule that decided. */
export interface ApprovalDecision {
  requirement: ApprovalRequirement;
  rule: string;
}

/** One matching rule layer, with the label its rules are reported under. */
interface Layer {
  label: string;
  rule: SenderRule;
}

function senderKeys(subject: PolicySubject): string[] {
  return [`${subject.channel}:${subject.senderId}`, `${subject.channel}:*`, "*"];
}

function senderLayers(map: Record<string, SenderRule>, subject: PolicySubject, prefix: string): Layer[] {
  const layers: Layer[] = [];
  for (const key of senderKeys(subject)) {
    const rule = map[key];
    if (rule) layers.push({ label: `${prefix}bySender[${JSON.stringify(key)}]`, rule });
  }
  return layers;
}

/** The rule layers that apply to the subject, most specific first (the global layer last). */
function layersFor(tools: ToolPolicyConfig, subject: PolicySubject): Layer[] {
  const layers: Layer[] = [];
  if (subject.conversationId !== undefined) {
    const key = `${subject.channel}:${subject.conversationId}`;
    const conversation = tools.byConversation[key];
    if (conversation) {
      const label = `byConversation[${JSON.stringify(key)}]`;
      layers.push(...senderLayers(conversation.bySender, subject, `${label}.`));
      layers.push({ label, rule: conversation });
    }
  }
  layers.push(...senderLayers(tools.bySender, subject, ""));
  layers.push({ label: "tools", rule: tools });
  return layers;
}

function profileRule(layer: Layer, profile: ToolProfile): string {
  return layer.label === "tools" ? `profile "${profile}"` : `${layer.label}.profile "${profile}"`;
}

/**
 * Whether `tool` is offered to the model for `subject`. A tool that is not offered is left
 * out of the model's tool list, and a call of it anyway is refused naming `rule`.
 */
export function toolAvailability(
  tools: ToolPolicyConfig,
  approval: ApprovalConfig,
  tool: ToolDescriptor,
  subject: PolicySubject,
): Availability {
  const layers = layersFor(tools, subject);

  for (const layer of layers) {
    const denied = firstMatchingPattern(layer.rule.deny, tool);
    if (denied !== undefined) return { offered: false, rule: `${layer.label}.deny "${denied}"` };
  }

  const profileLayer = layers.find((l) => l.rule.profile !== undefined) ?? layers[layers.length - 1];
  const profile = profileLayer.rule.profile ?? tools.profile;
  const inProfile = firstMatchingPattern(PROFILE_TOOLS[profile], tool);
  if (inProfile === undefined) return { offered: false, rule: profileRule(profileLayer, profile) };
  let grant = profileRule(profileLayer, profile);

  const allowLayer = layers.find((l) => l.rule.allow.length > 0);
  if (allowLayer) {
    const allowed = firstMatchingPattern(allowLayer.rule.allow, tool);
    if (allowed === undefined) return { offered: false, rule: `${allowLayer.label}.allow (not listed)` };
    grant = `${allowLayer.label}.allow "${allowed}"`;
  }

  if (tool.localOnly && subject.channel !== "console") return { offered: false, rule: tool.localOnly };

  if (tool.risk === "exec") {
    if (!tools.elevated.enabled) return { offered: false, rule: "tools.elevated.enabled is false" };
    const senderKey = `${subject.channel}:${subject.senderId}`;
    const elevatedBy = tools.elevated.allowFrom.find((p) => globMatches(p, senderKey));
    if (elevatedBy === undefined) return { offered: false, rule: "tools.elevated.allowFrom (sender not listed)" };
    grant = `${grant} + tools.elevated.allowFrom "${elevatedBy}"`;
  }

  if (approval.autonomy === "readonly" && tool.risk !== "read") {
    return { offered: false, rule: `autonomy "readonly" (${tool.risk} tool)` };
  }

  return { offered: true, rule: grant };
}

/**
 * The approval a call of an offered tool needs. `rememberedAlways` is whether someone
 * answered "always" for this tool in the subject's scope. Order: alwaysAsk beats every
 * other rule; then the autonomy level, autoApprove and remembered "always" decide.
 */
export function approvalRequirement(
  approval: ApprovalConfig,
  tool: ToolDescriptor,
  _subject: PolicySubject,
  rememberedAlways: boolean,
): ApprovalDecision {
  const asked = firstMatchingPattern(approval.alwaysAsk, tool);
  if (asked !== undefined) return { requirement: "prompt", rule: `approval.alwaysAsk "${asked}"` };

  switch (approval.autonomy) {
    case "full":
      return { requirement: "approved-by-policy", rule: 'autonomy "full"' };
    case "readonly":
      // Non-read tools are not offered in readonly mode; should one be called anyway, a person decides.
      return tool.risk === "read"
        ? { requirement: "not-required", rule: 'autonomy "readonly" (read tool)' }
        : { requirement: "prompt", rule: `autonomy "readonly" (${tool.risk} tool)` };
    case "supervised": {
      if (tool.risk === "read") return { requirement: "not-required", rule: 'autonomy "supervised" (read tool)' };
      const auto = firstMatchingPattern(approval.autoApprove, tool);
      if (auto !== undefined) return { requirement: "approved-by-policy", rule: `approval.autoApprove "${auto}"` };
      if (rememberedAlways) return { requirement: "approved-by-policy", rule: 'remembered "always"' };
      return { requirement: "prompt", rule: `autonomy "supervised" (${tool.risk} tool)` };
    }
  }
}
