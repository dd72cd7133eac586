/**
 * Config schemas for the tool gate: which tools are offered (`tools`), when a call needs a
 * person's approval (`approval`), config-declared hooks (`hooks`), receipts (`receipts`) and
 * the loop detector (`loops`). Every field has a default, so an empty config is a safe one.
 *
 * How `tools` rules combine (see tool-policy.ts):
 * - A deny from ANY matching layer wins over everything, at every layer.
 * - For `profile` and `allow`, the most specific layer that sets one decides, in this order:
 *     1. byConversation["<channel>:<conversationId>"].bySender[<sender key>]
 *     2. byConversation["<channel>:<conversationId>"]
 *     3. bySender[<sender key>]
 *     4. the global `tools` key
 *   Sender keys are tried as "<channel>:<senderId>", then "<channel>:*", then "*".
 *   So a per-person rule can give one person more than the rest of a conversation, and a
 *   conversation rule narrows (or widens) what everyone gets there.
 * - A non-empty allow list blocks every tool not in it; an empty one means "no allow list
 *   at this layer" (use `allow: ["*"]` to lift a less specific allow list).
 * - The profile is the base set; an allow list narrows it, never widens it.
 * - Exec-class tools (shell) also need `elevated.enabled` and the sender in
 *   `elevated.allowFrom`; elevation never overrides a deny.
 */
import { z } from "zod";
import { parseSpan, SPAN_PATTERN } from "./duration.ts";

/** The built-in profiles, smallest first. */
export const TOOL_PROFILES = ["minimal", "messaging", "standard", "full"] as const;

/** A tool profile name. */
export type ToolProfile = (typeof TOOL_PROFILES)[number];

/** Tool name patterns each profile offers (`*` is a wildcard; see glob.ts for tool ids). */
export const PROFILE_TOOLS: Record<ToolProfile, readonly string[]> = {
  minimal: ["current_time"],
  messaging: ["current_time", "tool_search"],
  standard: ["current_time", "list_files", "read_file", "write_file", "http_fetch", "shell", "tool_search", "mcp:*"],
  full: ["*"],
};

const patternList = z.array(z.string().min(1));

/** A per-sender rule: it may change the profile and allow list, and add denies. */
export const SenderRuleSchema = z.strictObject({
  profile: z.enum(TOOL_PROFILES).optional(),
  allow: patternList.default([]),
  deny: patternList.default([]),
});

/** A per-conversation rule; it may carry per-sender rules that apply only inside it. */
export const ConversationRuleSchema = SenderRuleSchema.extend({
  bySender: z.record(z.string(), SenderRuleSchema).default({}),
});

/** The `tools` config key. */
export const ToolPolicyConfigSchema = z.strictObject({
  profile: z.enum(TOOL_PROFILES).default("standard"),
  allow: patternList.default([]),
  deny: patternList.default([]),
  /** Keys: "<channel>:<senderId>", "<channel>:*" or "*". */
  bySender: z.record(z.string(), SenderRuleSchema).default({}),
  /** Keys: "<channel>:<conversationId>". */
  byConversation: z.record(z.string(), ConversationRuleSchema).default({}),
  elevated: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Sender keys ("slack:U123", "telegram:*", "*"); by default only the local console. */
      allowFrom: patternList.default(["console:*"]),
    })
    .prefault({}),
});

const regexSource = z.string().refine(
  (source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  },
  { message: "not a valid regular expression" },
);

/** A condition on one argument of a call: its string value matches a regular expression or a glob. */
export const ArgConditionSchema = z
  .strictObject({
    arg: z.string().min(1),
    /** A regular expression tested against the argument's value (unanchored unless it says ^ or $). */
    matches: regexSource.optional(),
    /** A glob (`*` any run of characters) the whole value must match. */
    glob: z.string().min(1).optional(),
  })
  .refine((c) => (c.matches === undefined) !== (c.glob === undefined), { message: "give exactly one of matches or glob" });

/**
 * One approver rule: which calls it covers (tool patterns, argument conditions, channels,
 * conversations) and who may approve them. The first rule that matches a call decides; with none,
 * the requester and `approval.approvers.<channel>` may.
 */
export const ApproverRuleSchema = z.strictObject({
  /** A label shown by `gatehouse explain` and on cards; default `approval.rules[<index>]`. */
  name: z.string().min(1).optional(),
  tools: patternList.min(1),
  /** Every condition must hold. */
  when: z.array(ArgConditionSchema).default([]),
  /** Channel names (slack, discord, telegram, console); unset: every channel. */
  channels: z.array(z.string().min(1)).optional(),
  /** Conversation ids, as "<channel>:<conversationId>" or a bare id; unset: every conversation. */
  conversations: z.array(z.string().min(1)).optional(),
  approvers: z
    .strictObject({
      /** Platform user ids. */
      users: z.array(z.string().min(1)).default([]),
      /** Slack user group ids (S…). */
      groups: z.array(z.string().min(1)).default([]),
      /** Discord role ids. */
      roles: z.array(z.string().min(1)).default([]),
      /** The conversation's administrators (Telegram chat admins, Slack workspace admins, Discord Administrator). */
      chatAdmins: z.boolean().default(false),
    })
    .prefault({}),
  /** Whether the person who asked may approve their own call; false: someone else must. */
  selfApprove: z.boolean().default(true),
  /** How many different people must approve; a single deny ends the request. */
  quorum: z.number().int().min(1).max(10).default(1),
  /** Post the card in this conversation of the same channel instead of the thread (the thread is told where). */
  routeTo: z
    .strictObject({
      conversation: z.string().min(1),
      /** How the thread names it ("#ops-approvals"); default the conversation id. */
      label: z.string().min(1).optional(),
    })
    .optional(),
});

/** The `approval` config key. */
export const ApprovalConfigSchema = z.strictObject({
  autonomy: z.enum(["readonly", "supervised", "full"]).default("supervised"),
  /** Tool patterns that always prompt, whatever else says (only a deny beats it). */
  alwaysAsk: patternList.default([]),
  /** Tool patterns approved by policy in supervised mode. */
  autoApprove: patternList.default(["current_time", "list_files", "read_file", "tool_search"]),
  timeoutMs: z.number().int().positive().default(300_000),
  /** Admins per channel who may approve anyone's call: { slack: ["U1"] }. */
  approvers: z.record(z.string(), z.array(z.string())).default({}),
  /** Where an "Always" answer holds: that thread or chat (session), the whole conversation, or the sender everywhere. */
  alwaysScope: z.enum(["session", "conversation", "sender"]).default("session"),
  /**
   * Whether an "Always" in a session or conversation also covers other people's calls there. Off: it
   * covers only the person whose call was answered (in a group without threads, the session is the
   * whole chat, and one member's "Always" would otherwise run everyone's calls without a card).
   */
  alwaysCoversOthers: z.boolean().default(false),
  /** How long a remembered "Always" holds ("7d", "12h", "30m"); unset: until revoked or `/new`. */
  alwaysTtl: z.string().regex(SPAN_PATTERN, 'a span such as "7d", "12h" or "30m"').refine((t) => parseSpan(t) !== undefined, "must be longer than zero").optional(),
  /** Ordered approver rules: the first that matches a call says who may approve it. */
  rules: z.array(ApproverRuleSchema).default([]),
});


const hookBase = {
  /** Tool patterns the hook applies to. */
  tools: patternList.min(1),
  /** A regular expression tested against the call's arguments as canonical JSON. */
  match: regexSource.optional(),
  priority: z.number().int().default(0),
};

/** One config-declared built-in hook. */
export const HookEntrySchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("block"), ...hookBase, reason: z.string().min(1) }),
  z.strictObject({ type: z.literal("require_approval"), ...hookBase, reason: z.string().optional() }),
]);

/** The `hooks` config key: a list of built-in hooks. */
export const HookConfigSchema = z.array(HookEntrySchema).default([]);

/** The `receipts` config key. */
export const ReceiptsConfigSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** HMAC key; when absent one is generated and kept in `<data dir>/receipt.key`. */
  key: z.string().min(16, "receipts.key must be at least 16 characters").optional(),
  /** Whether the receipt is shown with the tool's progress line. */
  show: z.boolean().default(false),
});

/** The `loops` config key: thresholds are counts of repeated calls, including the one being checked. */
export const LoopConfigSchema = z
  .strictObject({
    warnAt: z.number().int().min(2).default(3),
    blockAt: z.number().int().min(2).default(4),
    abortAt: z.number().int().min(2).default(6),
    /** Tool patterns the detector never looks at. */
    ignoredTools: patternList.default([]),
  })
  .refine((c) => c.warnAt <= c.blockAt && c.blockAt <= c.abortAt, {
    message: "loop thresholds must satisfy warnAt <= blockAt <= abortAt",
  });

/** The parsed `tools` key. */
export type ToolPolicyConfig = z.infer<typeof ToolPolicyConfigSchema>;
/** A parsed per-sender rule. */
export type SenderRule = z.infer<typeof SenderRuleSchema>;
/** A parsed per-conversation rule. */
export type ConversationRule = z.infer<typeof ConversationRuleSchema>;
/** One parsed approver rule. */
export type ApproverRule = z.infer<typeof ApproverRuleSchema>;
/** The parsed `approval` key. */
export type ApprovalConfig = z.infer<typeof ApprovalConfigSchema>;
/** One parsed config hook. */
export type HookEntry = z.infer<typeof HookEntrySchema>;
/** The parsed `hooks` key. */
export type HookConfig = z.infer<typeof HookConfigSchema>;
/** The parsed `receipts` key. */
export type ReceiptsConfig = z.infer<typeof ReceiptsConfigSchema>;
/** The parsed `loops` key. */
export type LoopConfig = z.infer<typeof LoopConfigSchema>;
