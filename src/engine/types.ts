/**
 * The engine's two inputs, kept apart: ResolvedExecution (stable per agent and channel) and
 * TurnState (per message); and the TurnEvents a turn emits to its sink.
 */
import type { Logger } from "pino";
import type { IngressEnvelope } from "../envelope.ts";
import type { ChatMessage, ModelClient } from "../model/types.ts";
import type { AnyTool } from "../tools/tool.ts";
import type { ApprovalManager } from "../approval/types.ts";
import type { Questioner } from "../approval/questions.ts";
import type { LeaseFence, ReceiptRecord, Store } from "../store/store.ts";
import type { ApprovalConfig, LoopConfig, ToolPolicyConfig } from "../policy/schema.ts";
import type { HookRegistry } from "../policy/hooks.ts";
import type { FilterGroup } from "../tools/mcp/schema.ts";
import type { Observer } from "../observe/observer.ts";
import type { SessionContext } from "./compaction.ts";

/** Runtime knobs of the loop. */
export interface EngineKnobs {
  maxIterations: number;
  maxToolResultChars: number;
  spillToolResultChars: number;
  parallelTools: boolean;
  duplicateExempt: string[];
  /** Tools never offered nor run in this execution, whatever the policy says. */
  excludedTools: string[];
  /** Where oversized tool output is saved. */
  spillDir: string;
  workspace: string;
  systemPrompt: string;
  /** The model's context window (`model.contextTokens`); else what the endpoint reports; else 32,000. */
  contextTokens?: number;
  /** Tokens kept free for the answer (`model.answerReserveTokens`); default an eighth of the window, 256–4,096. */
  answerReserveTokens?: number;
}

/** What a receipt vouches for: one successful execution. */
export interface ReceiptInput {
  sessionKey: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  argsCanonical?: string;
  output: string;
  outputHash?: string;
  at?: number;
}

/** Signs successful executions (HMAC receipts); absent when receipts are disabled. */
export interface ReceiptSigner {
  /**
   * The receipt of one successful execution, its id included; the engine stores it (see turn.ts).
   * `at`: when the call finished (now when absent).
   */
  sign(input: ReceiptInput): ReceiptRecord;
  /** Show the receipt id in the tool result line. */
  show: boolean;
}

/** MCP deferred activation: which MCP tools a session has activated through tool_search. */
export interface ToolActivation {
  deferred: boolean;
  filterGroups: FilterGroup[];
  isActive(sessionKey: string, tool: string): boolean;
  activate(sessionKey: string, tools: string[]): void;
  /** Brings a session's activations into memory (from the store) before its turn computes. */
  restore?(sessionKey: string): Promise<void>;
}

/** Everything stable for an agent on a channel: the engine reads its inputs from here and TurnState only. */
export interface ResolvedExecution {
  model: ModelClient;
  /** Every tool that exists (built-ins, MCP, tool_search); availability filters it per turn. */
  catalog: () => AnyTool[];
  policy: { tools: ToolPolicyConfig; approval: ApprovalConfig; loop: LoopConfig };
  hooks: HookRegistry;
  approvals: ApprovalManager;
  /** Asks the person behind a turn a question while a tool runs; absent where this channel cannot ask (questions are declined). */
  questions?: Questioner;
  store: Store;
  observer: Observer;
  log: Logger;
  knobs: EngineKnobs;
  receipts?: ReceiptSigner;
  activation?: ToolActivation;
}

/** A progress or output event of a turn, for the channel's delivery. */
export type TurnEvent =
  | { type: "tool.start"; callId: string; tool: string; hint?: string }
  | { type: "tool.finish"; callId: string; tool: string; ms: number; success: boolean; error?: string; receipt?: string }
  /** A running tool reported how far it got (an MCP server's progress notification). */
  | { type: "tool.progress"; callId: string; tool: string; text: string }
  | { type: "approval.waiting"; callId: string; tool: string }
  | { type: "notice"; text: string }
  | { type: "final"; text: string };

export interface TurnState {
  turnId: string;
  traceId: string;
  sessionKey: string;
  envelope: IngressEnvelope;
  /** Prior conversation, oldest first (bounded by the store's history limit). */
  history: ChatMessage[];
  signal: AbortSignal;
  emit: (event: TurnEvent) => void;
  /**
   * True once the bot is shutting down: the turn saves its checkpoint at the next step boundary
   * and parks, to continue after the restart. A turn aborted while draining parks too (its last
   * checkpoint stands) instead of ending as stopped.
   */
  draining?: () => boolean;
  /**
   * With several replicas: the session's lease (and fencing token) this replica runs the turn under.
   * Every checkpoint is written under it (Store.saveTurn); a turn whose replica lost it stops at once.
   */
  lease?: LeaseFence;
  /**
   * The caller ends the turn in the store itself (Store.finishTurn: the history appended and the
   * turn's record deleted in one transaction), so the engine leaves the record at the end. Without
   * it the engine deletes the record and the history is the caller's to append.
   */
  endsInStore?: boolean;
  /**
   * Waits for a person (a running tool's question) without holding the turn's concurrency slot,
   * taking one again before the tool goes on. Absent: the wait keeps the slot.
   */
  awayFromSlot?: <W>(wait: () => Promise<W>) => Promise<W>;
  /**
   * The session's context (compaction.ts `loadContext`), read by the caller before the turn took its
   * concurrency slot (a slot is for computing, not for waiting on the store). Absent: the turn reads it.
   */
  context?: Promise<SessionContext>;
}

export type TurnStatus = "done" | "cancelled" | "failed" | "stopped";

/** What running (or resuming) a turn gives back: its end, or the news that it parked. */
export type TurnResult = TurnOutcome | ParkedOutcome;

/**
 * A turn that left memory: its record is in the store. `approval`: it waits for a person's
 * decision on `approvalId`; `shutdown`: it stopped at a step boundary and continues after a restart.
 */
export interface ParkedOutcome {
  status: "parked";
  reason: "approval" | "shutdown";
  turnId: string;
  approvalId?: string;
  tool?: string;
}

export interface TurnOutcome {
  status: TurnStatus;
  /** The final answer (or the message saying why there is none). */
  text: string;
  /** Messages to append to the session history: user message, tool turns, answer. Never orphaned tool calls. */
  newMessages: ChatMessage[];
  /** For failed turns: the error a person sees, without internals. */
  error?: string;
  /** With `endsInStore`: the receipts of the turn's calls not saved yet, for the driver's finishTurn. */
  receipts?: ReceiptRecord[];
  /** With `endsInStore`: false when the store holds no record of the turn (it saved no checkpoint and was not resumed). */
  checkpointed?: boolean;
}

/** One tool call as the model made it, normalized. */
export interface ParsedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** Set when the arguments could not be parsed; the call then gets an error result. */
  parseError?: string;
}
