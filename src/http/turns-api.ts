/**
 * Triggered turns: `POST /v1/turns` on the bot's HTTP server runs a turn for a CI job or an alert
 * hook, like a schedule's tick — `{ prompt, deliverTo, approvalsTo?, name?, wait? }` — with a bearer
 * token (`GATEHOUSE_API_TOKEN`; without one configured, every call is refused). The answer and its
 * progress go to `deliverTo`; with `wait: true` the response carries the answer (or, past the wait,
 * a 202 with the turn id), and `GET /v1/turns/<id>` tells how a turn ended. The record of each call
 * is in the store, so any replica answers the poll.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { ConversationRefSchema, parseConversationRef } from "../config/schedules.ts";
import type { ChannelCapabilities, IngressEnvelope } from "../envelope.ts";
import { taskEnvelope } from "../gateway/task-envelope.ts";
import type { Observer } from "../observe/observer.ts";
import type { HttpRoutes } from "../ports.ts";
import type { Store } from "../store/store.ts";
import { sendJson } from "./server.ts";

const RECORD = "api.turn:";
const MAX_BODY_BYTES = 64 * 1024;
/** How long `wait: true` holds the request before answering 202. */
const WAIT_MS = 110_000;

const TurnRequestSchema = z.strictObject({
  prompt: z.string().min(1).max(8000).refine((p) => p.trim() !== "", "must not be blank"),
  deliverTo: ConversationRefSchema,
  approvalsTo: ConversationRefSchema.optional(),
  /** Names the caller in logs and its policy subject (`api:<name>`). */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default("api"),
  wait: z.boolean().default(false),
});

/** How a triggered turn stands, as stored and as `GET /v1/turns/<id>` answers. */
interface TurnRecord {
  id: string;
  /** "refused": the gateway turned the call away before any turn (access rules, a full queue). */
  status: "running" | "done" | "failed" | "cancelled" | "stopped" | "refused";
  deliverTo: string;
  answer?: string;
  /** False when the answer could not be posted to `deliverTo` (a chat the bot cannot post in). */
  delivered?: boolean;
  /** Where the turn's history is (for the replica that finishes it). */
  sessionKey?: string;
}

/** Ids of API turns (trace ids of other messages are 10 hex digits). */
const API_ID = /^[0-9a-f]{12}$/;
/** How often a waiting call looks in the store for a turn that another replica ran. */
const WAIT_POLL_MS = 500;

export interface TurnsApiOptions {
  /** The bearer token callers must send; absent: the API refuses every call. */
  token?: string;
  store: Store;
  observer: Observer;
  run: (env: IngressEnvelope) => Promise<void>;
  capabilitiesOf: (channel: string) => ChannelCapabilities | undefined;
}

export function mountTurnsApi(http: HttpRoutes, o: TurnsApiOptions): void {
  const waiting = new Map<string, (record: TurnRecord) => void>();
  const running = new Map<string, { sessionKey: string; deliverTo: string }>();
  /** Events that end a call: its answer posted (or not), or the gateway turning it away. */
  const ENDS = new Set(["reply.delivered", "reply.failed", "access.refused", "lane.full"]);
  o.observer.listen((e) => {
    // The reply is posted after the turn's history is written: its answer is the session's last message.
    if (!ENDS.has(e.event) || typeof e.traceId !== "string") return;
    const id = e.traceId;
    const refused = e.event === "access.refused" || e.event === "lane.full";
    const status = refused ? "refused" : (String(e.status) as TurnRecord["status"]);
    const delivered = refused ? undefined : e.event === "reply.delivered";
    const turn = running.get(id);
    if (turn) {
      running.delete(id);
      void finish(id, turn, status, delivered);
    } else if (API_ID.test(id)) {
      // With replicas, a call accepted elsewhere may have run here: its record says where its session is.
      void o.store.getValue(`${RECORD}${id}`).then((stored) => {
        const record = stored ? (JSON.parse(stored) as TurnRecord) : undefined;
        if (record?.status === "running" && record.sessionKey) return finish(id, { sessionKey: record.sessionKey, deliverTo: record.deliverTo }, status, delivered);
      }).catch(() => {});
    }
  });

  const finish = async (id: string, turn: { sessionKey: string; deliverTo: string }, status: TurnRecord["status"], delivered: boolean | undefined) => {
    // The answer is the turn's last message in its session (the history is written as the turn ends).
    const [last] = status === "refused" ? [] : await o.store.loadHistory(turn.sessionKey, 1).catch(() => []);
    const answer = last?.role === "assistant" && typeof last.content === "string" ? last.content : undefined;
    const record: TurnRecord = {
      id, status, deliverTo: turn.deliverTo, sessionKey: turn.sessionKey, ...(answer ? { answer } : {}), ...(delivered === undefined ? {} : { delivered }),
    };
    await o.store.setValue(`${RECORD}${id}`, JSON.stringify(record)).catch(() => {});
    waiting.get(id)?.(record);
  };

  http.mount("POST", "/v1/turns", (req, res) => {
    if (!authorized(req, o.token)) return refuse(res, o.token);
    void readJson(req).then(
      async (body) => {
        const parsed = TurnRequestSchema.safeParse(body);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          return sendJson(res, 400, { error: `invalid request: ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}` });
        }
        const call = parsed.data;
        const channel = parseConversationRef(call.deliverTo).channel;
        const capabilities = o.capabilitiesOf(channel);
        if (!capabilities) return sendJson(res, 400, { error: `deliverTo: the ${channel} channel does not run in this bot` });
        if (call.approvalsTo && parseConversationRef(call.approvalsTo).channel !== channel) {
          return sendJson(res, 400, { error: "approvalsTo: must be on the same platform as deliverTo" });
        }
        const id = randomBytes(6).toString("hex");
        const env = taskEnvelope({
          kind: "api", name: call.name, id: `api:${id}`, traceId: id, prompt: call.prompt, deliverTo: call.deliverTo,
          approvalsTo: call.approvalsTo, sessionThread: `api-${id}`, capabilities,
        });
        const sessionKey = `${env.channel}:${env.conversation.id}:${env.conversation.threadId}`;
        running.set(id, { sessionKey, deliverTo: call.deliverTo });
        await o.store.setValue(`${RECORD}${id}`, JSON.stringify({ id, status: "running", deliverTo: call.deliverTo, sessionKey } satisfies TurnRecord));
        const done = call.wait ? new Promise<TurnRecord | undefined>((resolve) => {
          const end = (record: TurnRecord | undefined) => {
            clearTimeout(timer);
            clearInterval(poll);
            resolve(record);
          };
          const timer = setTimeout(() => end(undefined), WAIT_MS);
          // Another replica may run the turn: its record in the store says when it is done.
          const poll = setInterval(() => {
            void o.store.getValue(`${RECORD}${id}`).then((stored) => {
              const record = stored ? (JSON.parse(stored) as TurnRecord) : undefined;
              if (record && record.status !== "running") end(record);
            }, () => {});
          }, WAIT_POLL_MS);
          waiting.set(id, end);
        }) : undefined;
        await o.run(env);
        if (!done) return sendJson(res, 202, { id, status: "running", poll: `/v1/turns/${id}` });
        const record = await done;
        waiting.delete(id);
        return record ? sendJson(res, 200, record) : sendJson(res, 202, { id, status: "running", poll: `/v1/turns/${id}` });
      },
      (err: Error) => {
        // An oversized body is answered, then the connection closed (the rest of the body is not read).
        if (err instanceof BodyTooLarge) res.setHeader("connection", "close");
        sendJson(res, err instanceof BodyTooLarge ? 413 : 400, { error: err.message });
      },
    );
  });

  http.mount("GET", "/v1/turns/*", (req, res) => {
    if (!authorized(req, o.token)) return refuse(res, o.token);
    const id = new URL(req.url ?? "/", "http://x").pathname.split("/").pop() ?? "";
    void answerPoll(res, id);
  });

  const answerPoll = async (res: ServerResponse, id: string) => {
    const stored = /^[0-9a-f]{12}$/.test(id) ? await o.store.getValue(`${RECORD}${id}`) : undefined;
    if (!stored) return sendJson(res, 404, { error: "no such turn" });
    sendJson(res, 200, JSON.parse(stored));
  };
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return false;
  const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(res: ServerResponse, token: string | undefined): void {
  res.setHeader("www-authenticate", "Bearer");
  sendJson(res, 401, { error: token ? "missing or wrong bearer token" : "the turns API is off: set GATEHOUSE_API_TOKEN to use it" });
}

class BodyTooLarge extends Error {
  constructor() {
    super(`the body is larger than ${MAX_BODY_BYTES} bytes`);
  }
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // The rest is read and dropped, so the answer can be sent; the promise is settled once, here.
        reject(new BodyTooLarge());
        chunks.length = 0;
        req.removeAllListeners("data");
        req.resume();
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) return;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new Error("the body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}
