/**
 * The emulator's gateway: a WebSocket speaking Discord's JSON protocol (v10, no compression).
 * HELLO → IDENTIFY → READY + GUILD_CREATE, heartbeats, dispatches numbered per session,
 * RESUME replaying what a dropped connection missed, and the close codes discord.js reacts to.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { DiscordState } from "./state.ts";

/** Gateway intents the emulator filters by. */
export const Intents = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 } as const;

export interface GatewayOptions {
  /** The app has the privileged Message Content intent switched on in the Developer Portal. */
  messageContentIntent: boolean;
  heartbeatIntervalMs: number;
}

interface Sent {
  s: number;
  t: string;
  d: Record<string, unknown>;
}

interface Session {
  id: string;
  intents: number;
  seq: number;
  /** Every dispatch of the session, kept for RESUME. */
  log: Sent[];
  socket?: WebSocket;
  /** Highest sequence number written to a socket. */
  delivered: number;
}

const Op = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 } as const;

/** The gateway half of the emulator. */
export class DiscordGateway {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sessions = new Map<string, Session>();
  private readonly state: DiscordState;
  private readonly options: GatewayOptions;
  private readonly waiters: Array<{ session: Session; seq: number; resolve: () => void }> = [];
  /** Every IDENTIFY and RESUME the bot sent, oldest first. */
  readonly handshakes: Array<{ op: "identify" | "resume"; at: number; seq?: number }> = [];
  /** Close codes the emulator sent. */
  readonly closeCodes: number[] = [];
  url = "";

  constructor(state: DiscordState, options: GatewayOptions) {
    this.state = state;
    this.options = options;
  }

  /** Takes over an HTTP upgrade request for the gateway path. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
  }

  private accept(ws: WebSocket, req: IncomingMessage): void {
    const query = new URL(req.url ?? "/", "ws://emulator").searchParams;
    if (query.get("v") !== "10") return this.closeWith(ws, 4012, "Invalid API version");
    if ((query.get("encoding") ?? "json") !== "json" || query.has("compress")) return this.closeWith(ws, 4002, "Decode error: only plain JSON is emulated");
    this.send(ws, { op: Op.Hello, d: { heartbeat_interval: this.options.heartbeatIntervalMs }, s: null, t: null });
    let session: Session | undefined;
    ws.on("message", (raw) => {
      let payload: { op?: unknown; d?: unknown };
      try {
        payload = JSON.parse(String(raw)) as { op?: unknown; d?: unknown };
      } catch {
        return this.closeWith(ws, 4002, "Decode error");
      }
      if (payload.op === Op.Heartbeat) return this.send(ws, { op: Op.HeartbeatAck, d: null, s: null, t: null });
      if (payload.op === Op.Identify) {
        if (session) return this.closeWith(ws, 4005, "Already authenticated");
        session = this.identify(ws, payload.d);
        return;
      }
      if (payload.op === Op.Resume) {
        if (session) return this.closeWith(ws, 4005, "Already authenticated");
        session = this.resume(ws, payload.d);
        return;
      }
      if (!session) return this.closeWith(ws, 4003, "Not authenticated");
    });
    ws.on("close", () => {
      if (session?.socket === ws) session.socket = undefined;
    });
  }

  private identify(ws: WebSocket, d: unknown): Session | undefined {
    const data = (d ?? {}) as { token?: unknown; intents?: unknown; properties?: unknown };
    this.handshakes.push({ op: "identify", at: Date.now() });
    if (data.token !== this.state.token) return void this.closeWith(ws, 4004, "Authentication failed");
    if (typeof data.intents !== "number" || typeof data.properties !== "object") return void this.closeWith(ws, 4013, "Invalid intent(s)");
    if (data.intents & Intents.MessageContent && !this.options.messageContentIntent) return void this.closeWith(ws, 4014, "Disallowed intent(s)");
    const session: Session = { id: this.state.snowflake(), intents: data.intents, seq: 0, log: [], socket: ws, delivered: 0 };
    this.sessions.set(session.id, session);
    this.push(session, "READY", {
      v: 10,
      user: this.state.bot,
      guilds: [{ id: this.state.guildId, unavailable: true }],
      session_id: session.id,
      resume_gateway_url: this.url,
      shard: [0, 1],
      application: { id: this.state.applicationId, flags: 0 },
      private_channels: [],
    });
    if (session.intents & Intents.Guilds) this.push(session, "GUILD_CREATE", this.state.guildJson());
    return session;
  }

  private resume(ws: WebSocket, d: unknown): Session | undefined {
    const data = (d ?? {}) as { token?: unknown; session_id?: unknown; seq?: unknown };
    this.handshakes.push({ op: "resume", at: Date.now(), seq: typeof data.seq === "number" ? data.seq : undefined });
    if (data.token !== this.state.token) return void this.closeWith(ws, 4004, "Authentication failed");
    const session = typeof data.session_id === "string" ? this.sessions.get(data.session_id) : undefined;
    if (!session || typeof data.seq !== "number" || data.seq > session.seq) {
      this.send(ws, { op: Op.InvalidSession, d: false, s: null, t: null });
      return undefined;
    }
    session.socket?.terminate();
    session.socket = ws;
    for (const event of session.log) if (event.s > data.seq) this.write(session, event);
    this.push(session, "RESUMED", {});
    return session;
  }

  /**
   * Sends a dispatch to every session whose intents cover it (kept for RESUME while a connection
   * is down). Resolves once some session's socket has carried it.
   */
  dispatch(event: string, data: Record<string, unknown>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const session of this.sessions.values()) {
      const shaped = this.shapeFor(session, event, data);
      if (shaped) waits.push(this.delivered(session, this.push(session, event, shaped)));
    }
    return waits.length ? Promise.any(waits) : Promise.resolve();
  }

  /** The event as a session with these intents would receive it, or undefined when it would not. */
  private shapeFor(session: Session, event: string, data: Record<string, unknown>): Record<string, unknown> | undefined {
    const inGuild = typeof data.guild_id === "string";
    if (event.startsWith("MESSAGE_")) {
      if (!(session.intents & (inGuild ? Intents.GuildMessages : Intents.DirectMessages))) return undefined;
      if (event === "MESSAGE_CREATE") data = { ...data, channel_type: this.state.channels.get(String(data.channel_id))?.type };
      const author = data.author as { id?: string } | undefined;
      const mentionsBot = (data.mentions as Array<{ id: string }> | undefined)?.some((u) => u.id === this.state.bot.id);
      // Without Message Content, guild messages arrive with empty content unless they concern the bot.
      if (inGuild && !(session.intents & Intents.MessageContent) && author?.id !== this.state.bot.id && !mentionsBot) {
        return { ...data, content: "", embeds: [], attachments: [], components: [] };
      }
      return data;
    }
    if (event.startsWith("THREAD_") || event.startsWith("GUILD_") || event.startsWith("CHANNEL_")) {
      return session.intents & Intents.Guilds ? data : undefined;
    }
    return data;
  }

  private push(session: Session, t: string, d: Record<string, unknown>): number {
    const event = { s: ++session.seq, t, d };
    session.log.push(event);
    this.write(session, event);
    return event.s;
  }

  private write(session: Session, event: Sent): void {
    const ws = session.socket;
    if (!ws || ws.readyState !== ws.OPEN) return;
    this.send(ws, { op: Op.Dispatch, ...event });
    session.delivered = Math.max(session.delivered, event.s);
    for (const w of [...this.waiters]) {
      if (w.session === session && session.delivered >= w.seq) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  private delivered(session: Session, seq: number): Promise<void> {
    if (session.delivered >= seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ session, seq, resolve }));
  }

  /** Drops every live connection without a clean close (as a network failure does); sessions stay resumable. */
  dropConnections(): void {
    for (const session of this.sessions.values()) session.socket?.terminate();
  }

  /** Whether a bot connection is open and identified. */
  get connected(): boolean {
    return [...this.sessions.values()].some((s) => s.socket?.readyState === 1);
  }

  private send(ws: WebSocket, payload: unknown): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  }

  private closeWith(ws: WebSocket, code: number, reason: string): void {
    this.closeCodes.push(code);
    ws.close(code, reason);
  }

  /** Closes every connection. */
  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }
}
