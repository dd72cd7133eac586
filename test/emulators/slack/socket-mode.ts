/**
 * The emulated Socket Mode link: tickets handed out by apps.connections.open, the
 * WebSocket (hello, envelopes, acks, disconnect), and the ack clock that tells a test how
 * long the bot took to acknowledge each envelope.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { AckTiming, SlackWorld } from "./state.ts";

export type EnvelopeKind = AckTiming["kind"];

/** Slack's acknowledgement deadline. */
export const ACK_DEADLINE_MS = 3000;

export class SocketModeLink {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, (timing: AckTiming) => void>();
  private readonly world: SlackWorld;
  private readonly baseWsUrl: () => string;

  constructor(world: SlackWorld, baseWsUrl: () => string) {
    this.world = world;
    this.baseWsUrl = baseWsUrl;
  }

  /** A fresh one-time Socket Mode URL, as apps.connections.open returns. */
  newUrl(): string {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return `${this.baseWsUrl()}/link/?ticket=${ticket}&app_id=${this.world.appId}`;
  }

  /** True when a bot is connected and said nothing wrong. */
  get connected(): boolean {
    return [...this.sockets].some((s) => s.readyState === s.OPEN);
  }

  /** Resolves once a bot is connected (or rejects after `timeoutMs`). */
  async waitConnected(timeoutMs = 3000): Promise<void> {
    const ok = await this.world.waitFor(() => (this.connected ? true : undefined), timeoutMs);
    if (!ok) throw new Error("no Socket Mode connection");
  }

  /** Handles an HTTP upgrade to the link; refuses unknown or reused tickets. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname.replace(/\/$/, "") !== "/link" || !this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on("message", (data) => this.onAck(String(data)));
      ws.on("close", () => {
        this.sockets.delete(ws);
        this.world.changed();
      });
      ws.send(JSON.stringify({
        type: "hello", num_connections: this.sockets.size,
        debug_info: { host: "emulator", build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: this.world.appId },
      }));
      this.world.changed();
    });
  }

  private onAck(raw: string): void {
    let msg: { envelope_id?: unknown; payload?: unknown };
    try {
      msg = JSON.parse(raw) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.envelope_id !== "string") return;
    const timing = this.world.acks.find((a) => a.envelopeId === msg.envelope_id);
    if (!timing || timing.ackedAt !== undefined) return;
    timing.ackedAt = Date.now();
    timing.ms = timing.ackedAt - timing.sentAt;
    timing.ackPayload = msg.payload;
    this.pending.get(timing.envelopeId)?.(timing);
    this.pending.delete(timing.envelopeId);
    this.world.changed();
  }

  /**
   * Sends an envelope to the connected bot; resolves with its ack timing once acked, or
   * un-acked after the deadline (plus a margin, so a late ack is still measured).
   */
  deliver(kind: EnvelopeKind, payload: unknown, extra: Record<string, unknown> = {}): Promise<AckTiming> {
    const ws = [...this.sockets].find((s) => s.readyState === s.OPEN);
    if (!ws) return Promise.reject(new Error("no Socket Mode connection to deliver to"));
    const envelopeId = randomUUID();
    const timing: AckTiming = { envelopeId, kind, sentAt: Date.now() };
    this.world.acks.push(timing);
    const acked = new Promise<AckTiming>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelopeId);
        resolve(timing);
      }, ACK_DEADLINE_MS + 500);
      this.pending.set(envelopeId, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
    ws.send(JSON.stringify({ envelope_id: envelopeId, payload, type: kind, accepts_response_payload: kind !== "events_api", ...extra }));
    return acked;
  }

  /** Asks every connected bot to reconnect, as Slack does before recycling a link. */
  requestRefresh(): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: "disconnect", reason: "refresh_requested", debug_info: { host: "emulator" } }));
  }

  close(): void {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
