/**
 * Tool-call hooks: code (and config-declared built-ins) that sees every call before it runs
 * and every result after. Before a call, handlers run by priority (higher first, ties in
 * registration order) and every one of them runs:
 * - a block is sticky: a later handler cannot undo it;
 * - rewritten params replace the current ones (last writer wins) ...
 * - ... until a handler requires approval: the first such handler wins and freezes the
 *   params, so later rewrites are ignored (later handlers may still block);
 * - a handler that throws blocks the call, naming the hook and its error.
 */
import type { Logger } from "pino";
import type { ToolResult } from "../tools/tool.ts";
import { silentLogger } from "../observe/logger.ts";
import { canonicalJson } from "../observe/canonical-json.ts";
import { registerEgressHook, type EgressRuleOptions } from "./egress.ts";
import { firstMatchingPattern } from "./glob.ts";
import type { HookConfig } from "./schema.ts";

/** One tool call as hooks see it. */
export interface ToolCallInfo {
  callId: string;
  tool: string;
  /** `builtin` or `mcp:<server>`; lets config hooks match `mcp:<server>__*` patterns. */
  owner?: string;
  params: Record<string, unknown>;
  sessionKey: string;
  senderId: string;
  channel: string;
}

/** What a before-call handler may ask for; returning nothing changes nothing. */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  params?: Record<string, unknown>;
  requireApproval?: boolean;
  approvalReason?: string;
}

/** A handler run before a call. */
export type BeforeToolCallHandler = (
  call: ToolCallInfo,
) => BeforeToolCallResult | void | Promise<BeforeToolCallResult | void>;

/** A finished call as after-call handlers see it. */
export type AfterToolCallInfo = ToolCallInfo & { result: ToolResult; ms: number };

/** A handler run after a call; its errors are logged and otherwise ignored. */
export type AfterToolCallHandler = (call: AfterToolCallInfo) => void | Promise<void>;

/** Registration options. */
export interface HookOptions {
  /** Higher runs first; default 0. */
  priority?: number;
  /**
   * Which calls the handler is for, judged without their params; the handler is not run for the
   * others (nor are the params copied for it). Every call when absent.
   */
  appliesTo?: (call: Omit<ToolCallInfo, "params">) => boolean;
}

/** The outcome of the before-call hooks for one call. */
export interface BeforeToolCallOutcome {
  params: Record<string, unknown>;
  blocked?: { by: string; reason: string };
  approvalRequired?: { by: string; reason?: string };
}

interface Registered<H> {
  name: string;
  handler: H;
  priority: number;
  seq: number;
  appliesTo?: (call: Omit<ToolCallInfo, "params">) => boolean;
}

/** The hooks of one bot; the turn engine calls `runBefore` and `runAfter` for every call. */
export class HookRegistry {
  private readonly before: Registered<BeforeToolCallHandler>[] = [];
  private readonly after: Registered<AfterToolCallHandler>[] = [];
  /** `before` and `after` in running order, sorted again after a change. */
  private readonly sorted = new Map<Registered<unknown>[], Registered<unknown>[]>();
  private readonly log: Logger;
  private seq = 0;

  constructor(options: { log?: Logger } = {}) {
    this.log = options.log ?? silentLogger();
  }

  /** Registers a before-call handler; returns a function that removes it. */
  onBeforeToolCall(name: string, handler: BeforeToolCallHandler, options: HookOptions = {}): () => void {
    return this.add(this.before, name, handler, options);
  }

  /** Registers an after-call handler; returns a function that removes it. */
  onAfterToolCall(name: string, handler: AfterToolCallHandler, options: HookOptions = {}): () => void {
    return this.add(this.after, name, handler, options);
  }

  /** Whether a before-call handler is registered (without one, a call's params go through as they are). */
  get hasBefore(): boolean {
    return this.before.length > 0;
  }

  /** Whether an after-call handler is registered. */
  get hasAfter(): boolean {
    return this.after.length > 0;
  }

  /** Runs every before-call handler for `call`; the outcome holds the params it ends with. */
  async runBefore(call: ToolCallInfo): Promise<BeforeToolCallOutcome> {
    let params = call.params;
    let blocked: BeforeToolCallOutcome["blocked"];
    let approvalRequired: BeforeToolCallOutcome["approvalRequired"];

    for (const hook of this.ordered(this.before)) {
      let result: BeforeToolCallResult | void;
      try {
        if (hook.appliesTo && !hook.appliesTo(call)) continue;
        // Each handler gets its own copy, so one cannot change the params behind the rules' back.
        result = await hook.handler({ ...call, params: structuredClone(params) });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.log.warn({ hook: hook.name, tool: call.tool, callId: call.callId, err: message }, "before_tool_call hook failed");
        blocked ??= { by: hook.name, reason: `hook "${hook.name}" failed: ${message}` };
        continue;
      }
      if (!result) continue;
      if (result.params && !approvalRequired) params = result.params;
      if (result.block) blocked ??= { by: hook.name, reason: result.reason ?? `blocked by hook "${hook.name}"` };
      if (result.requireApproval && !approvalRequired) {
        approvalRequired = { by: hook.name, ...(result.approvalReason !== undefined && { reason: result.approvalReason }) };
      }
    }

    return { params, ...(blocked && { blocked }), ...(approvalRequired && { approvalRequired }) };
  }

  /** Runs every after-call handler; a failing handler is logged and never fails the call. */
  async runAfter(call: AfterToolCallInfo): Promise<void> {
    for (const hook of this.ordered(this.after)) {
      try {
        if (hook.appliesTo && !hook.appliesTo(call)) continue;
        await hook.handler(call);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.log.warn({ hook: hook.name, tool: call.tool, callId: call.callId, err: message }, "after_tool_call hook failed");
      }
    }
  }

  private add<H>(list: Registered<H>[], name: string, handler: H, options: HookOptions): () => void {
    const entry: Registered<H> = { name, handler, priority: options.priority ?? 0, seq: this.seq++, appliesTo: options.appliesTo };
    list.push(entry);
    this.sorted.delete(list);
    return () => {
      const at = list.indexOf(entry);
      if (at >= 0) list.splice(at, 1);
      this.sorted.delete(list);
    };
  }

  private ordered<H>(list: Registered<H>[]): Registered<H>[] {
    let sorted = this.sorted.get(list) as Registered<H>[] | undefined;
    if (!sorted) {
      sorted = [...list].sort((a, b) => b.priority - a.priority || a.seq - b.seq);
      this.sorted.set(list, sorted);
    }
    return sorted;
  }
}


/**
 * Registers the built-in hooks declared in config (`hooks`), named `config:<index>:<type>`, and the
 * http_fetch egress rule (egress.ts), which asks before every fetch unless `egress` names the hosts
 * in `http.allowHosts` (pass `{ allowHosts: config.http.allowHosts, approval: config.approval }`).
 */
export function registerConfigHooks(registry: HookRegistry, hooksConfig: HookConfig, egress: EgressRuleOptions = {}): void {
  registerEgressHook(registry, egress);
  hooksConfig.forEach((entry, index) => {
    const match = entry.match !== undefined ? new RegExp(entry.match) : undefined;
    const name = `config:${index}:${entry.type}`;
    registry.onBeforeToolCall(
      name,
      (call) => {
        if (match && !match.test(canonicalJson(call.params))) return;
        if (entry.type === "block") return { block: true, reason: entry.reason };
        return { requireApproval: true, ...(entry.reason !== undefined && { approvalReason: entry.reason }) };
      },
      { priority: entry.priority, appliesTo: (call) => firstMatchingPattern(entry.tools, { name: call.tool, owner: call.owner ?? "builtin" }) !== undefined },
    );
  });
}
