/**
 * The turn record: everything a turn needs to continue in another process — its messages so far,
 * the batch of calls in hand with their prepared arguments and decisions, the iteration, the
 * guards' state, the trace id and the envelope. Saved at every step boundary (a checkpoint) and
 * when the turn parks to wait for a person. Records carry a schema version; a record written by
 * an older Gatehouse is read by the decoder of its version (test/engine/fixtures keeps samples).
 */
import { z } from "zod";
import { IngressEnvelopeSchema, type IngressEnvelope } from "../envelope.ts";
import type { ChatMessage } from "../model/types.ts";
import { MessageV1 } from "../store/message-codec.ts";
import type { StoredTurn } from "../store/store.ts";
import type { LoopAttempt } from "./loop-detector.ts";
import type { DispatchedCall } from "./dispatch.ts";
import type { BatchDecisions, PreparedCall, WaitingCall } from "./prepare.ts";
import type { ParsedCall } from "./types.ts";

/** The version new records are written with. */
export const TURN_RECORD_VERSION = 1;

/** The batch of tool calls of one model reply, as far as the turn got with it. */
export interface BatchState extends BatchDecisions {
  /** The assistant's tool-call message. */
  assistant: ChatMessage;
  calls: ParsedCall[];
  /** Calls prepared so far, in the model's order. */
  prepared: PreparedCall[];
  /** The call that waits for a person (the turn is parked). */
  waiting?: WaitingCall;
  /** Dispatch, once every call is prepared: results by position, and the calls running. */
  dispatch?: { done: Array<DispatchedCall | null>; running: number[] };
}

export interface TurnRecord {
  version: typeof TURN_RECORD_VERSION;
  turnId: string;
  traceId: string;
  sessionKey: string;
  envelope: IngressEnvelope;
  startedAt: number;
  /** This turn's messages so far (the user message first); the earlier history stays in the store. */
  newMessages: ChatMessage[];
  /** Model requests made with tools so far. */
  iteration: number;
  guards: { unapprovedPrompts: string[]; loop: LoopAttempt[]; callIds: string[]; endTurn?: string };
  batch?: BatchState;
}

const Args = z.record(z.string(), z.unknown());
const ToolResultV1 = z.looseObject({ success: z.boolean(), output: z.string(), error: z.string().optional() });
const ParsedCallV1 = z.object({ id: z.string(), name: z.string(), args: Args, parseError: z.string().optional() });
const Standing = z.enum(["not-required", "approved-by-policy", "approved-by-person"]);
const PreparedV1 = z.object({
  call: ParsedCallV1,
  params: Args,
  result: ToolResultV1.optional(),
  standing: Standing,
  prompted: z.boolean(),
  loopWarning: z.string().optional(),
});
const DispatchedV1 = PreparedV1.extend({ result: ToolResultV1, ms: z.number(), ran: z.boolean() });
const GateOutcomeV1 = z.union([
  z.object({ pass: z.literal(true), standing: Standing, prompted: z.boolean() }),
  z.object({ pass: z.literal(false), result: ToolResultV1, prompted: z.boolean() }),
]);

const TurnRecordV1 = z.object({
  version: z.literal(1),
  turnId: z.string(),
  traceId: z.string(),
  sessionKey: z.string(),
  envelope: IngressEnvelopeSchema,
  startedAt: z.number(),
  newMessages: z.array(MessageV1),
  iteration: z.number().int().nonnegative(),
  guards: z.object({
    unapprovedPrompts: z.array(z.string()),
    loop: z.array(z.object({ name: z.string(), argsCanonical: z.string(), outputHash: z.string().optional() })),
    callIds: z.array(z.string()),
    endTurn: z.string().optional(),
  }),
  batch: z
    .object({
      assistant: MessageV1,
      calls: z.array(ParsedCallV1),
      prepared: z.array(PreparedV1),
      decided: z.record(z.string(), GateOutcomeV1),
      firstOfKind: z.record(z.string(), z.string()),
      waiting: z
        .object({
          index: z.number().int().nonnegative(),
          approvalId: z.string(),
          expiresAt: z.number(),
          params: Args,
          argsHash: z.string(),
          rule: z.string(),
          loopWarning: z.string().optional(),
        })
        .optional(),
      dispatch: z.object({ done: z.array(DispatchedV1.nullable()), running: z.array(z.number().int().nonnegative()) }).optional(),
    })
    .optional(),
});

/** The store's form of a record. */
export function encodeTurnRecord(record: TurnRecord, now = Date.now()): StoredTurn {
  return {
    turnId: record.turnId,
    sessionKey: record.sessionKey,
    channel: record.envelope.channel,
    traceId: record.traceId,
    version: record.version,
    waitingApprovalId: record.batch?.waiting?.approvalId,
    updatedAt: now,
    body: JSON.stringify(record),
  };
}

/** Reads a stored record; throws naming the problem when it cannot be read (newer version, damaged). */
export function decodeTurnRecord(stored: StoredTurn): TurnRecord {
  if (stored.version > TURN_RECORD_VERSION) {
    throw new Error(
      `turn ${stored.turnId} was saved by a newer Gatehouse (record version ${stored.version}, this one reads up to ${TURN_RECORD_VERSION})`,
    );
  }
  const parsed = TurnRecordV1.safeParse(JSON.parse(stored.body));
  if (!parsed.success) throw new Error(`turn ${stored.turnId} has a damaged record: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  // The schema checks the shape; the engine's types are the same fields (tool results keep their extra keys).
  return parsed.data as unknown as TurnRecord;
}
