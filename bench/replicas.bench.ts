/**
 * Replicas: does a second replica on PostgreSQL add throughput? 200 Slack conversations (one
 * top-level mention each in its own channel, so the bot's Slack pacing of about one post a second per
 * channel is never the limit), all posted at once; the model answers every request after a fixed delay and each
 * replica runs at most `gateway.maxConcurrentTurns` model requests at once (a config file), so the
 * turn slots are the bottleneck. Compared:
 *   - one:  ONE replica on the embedded SQLite store (no DATABASE_URL);
 *   - two:  TWO replicas on one PostgreSQL database (DATABASE_URL), each event delivered to them
 *           round-robin by a small HTTP balancer, as a load balancer in front of both would.
 * The one-replica setup goes through the same balancer (one upstream), so both pay the same hop.
 * Everything runs on 127.0.0.1: the Slack emulator in HTTP Events mode, the OpenAI-compatible
 * emulator behind one delaying proxy per replica (the emulator has no delay option; per replica, so
 * that each replica's slot use shows), a real PostgreSQL
 * server (test/support/postgres.ts; one server for the bench, a fresh database per round) and the
 * bots as `node bin/gatehouse.js start` child processes.
 *
 * Rounds alternate one / two (fresh processes, database, emulators and data folders each), after a
 * warm-up round of each that is not counted. Figures are medians over the rounds; lost and
 * duplicated answers are totals. Targets (from the issue): two replicas ≥ 1.6× one replica's
 * answers/s, two replicas' p99 ≤ 1.2× one's, and every message answered exactly once.
 *
 * Run: `npm run bench -- replicas` (or `node bench/replicas.bench.ts`). Knobs: BENCH_ROUNDS (3),
 * BENCH_CONVERSATIONS (200), BENCH_MODEL_DELAY_MS (250), BENCH_MAX_TURNS (4), BENCH_BUDGET_S (200:
 * no new pair of rounds starts when it would overrun), BENCH_LEASE_TTL_MS (unset: the default),
 * BENCH_WITH_PG1=1 (adds one replica on PostgreSQL, as a diagnostic column), BENCH_MENTION_ONLY=1
 * (the app subscribes to app_mention only: one event per post instead of message + app_mention).
 * Exit code 0 whatever the figures; 1 only when the bench itself broke (e.g. no PostgreSQL).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startOpenAIEmulator, type OpenAIEmulator, type RecordedRequest, type Step } from "../test/emulators/openai/index.ts";
import { startSlackEmulator, type SlackEmulator } from "../test/emulators/slack/index.ts";
import { slackSignature } from "../test/emulators/slack/http-events.ts";
import { startPostgres, type PostgresServer } from "../test/support/postgres.ts";
import { freePort } from "../test/support/free-port.ts";
import { cleanupAll, makeTempDir, removeTempDir, spawnNode, type ManagedProcess } from "./support/processes.ts";
import { fmt, median, percentile, ratio, renderTable, sum } from "./support/stats.ts";

const num = (name: string, fallback: number, min: number) => {
  const v = Number(process.env[name] ?? fallback);
  return Number.isFinite(v) && v >= min ? v : fallback;
};
const ROUNDS = Math.floor(num("BENCH_ROUNDS", 3, 1));
const CONVERSATIONS = Math.floor(num("BENCH_CONVERSATIONS", 200, 1));
const MODEL_DELAY_MS = num("BENCH_MODEL_DELAY_MS", 250, 0);
const MAX_TURNS = Math.floor(num("BENCH_MAX_TURNS", 4, 1));
const BUDGET_MS = num("BENCH_BUDGET_S", 200, 30) * 1000;
const LEASE_TTL_MS = process.env.BENCH_LEASE_TTL_MS ? Math.floor(num("BENCH_LEASE_TTL_MS", 10_000, 500)) : undefined;
const WARMUP_CONVERSATIONS = Math.min(CONVERSATIONS, 40);
const SIGNING_SECRET = "bench-replicas-signing-secret";
/** A round ends when every answer came, or nothing happened for this long, or after the cap. */
const IDLE_MS = 15_000;
const ROUND_CAP_MS = 60_000;
/** After the last answer: time for late duplicates to show up. */
const LATE_MS = 2_000;

const out = (line = "") => process.stdout.write(`${line}\n`);
const startedAt = Date.now();
const elapsed = () => Date.now() - startedAt;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A wait that does not keep the process alive (for races against a slow step). */
const grace = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** `onepg` (BENCH_WITH_PG1=1): one replica on PostgreSQL, to tell the database's cost from the second replica's gain. */
type Setup = "one" | "two" | "onepg";
const LABEL: Record<Setup, string> = { one: "1 replica, SQLite", two: "2 replicas, PostgreSQL", onepg: "1 replica, PostgreSQL" };
const WITH_PG1 = process.env.BENCH_WITH_PG1 === "1";
/**
 * BENCH_MENTION_ONLY=1: the app subscribes to app_mention only, so a post is one event (not message +
 * app_mention), and round-robin splits the posts exactly; by default both events come, as with the manifest.
 */
const MENTION_ONLY = process.env.BENCH_MENTION_ONLY === "1";
const SETUPS: Setup[] = WITH_PG1 ? ["one", "two", "onepg"] : ["one", "two"];
const replicaCount = (setup: Setup) => (setup === "two" ? 2 : 1);

// ---------------------------------------------------------------- PostgreSQL (one server, a database per round)

let pgServer: PostgresServer | undefined;
let pgRoot: string | undefined;
const pgDirs = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith("gatehouse-pg-")));
// startPostgres kills the server at exit; its folder is ours to remove when the bench dies early.
process.on("exit", () => {
  if (pgRoot) rmSync(pgRoot, { recursive: true, force: true });
});

async function stopEverything(): Promise<void> {
  cleanupAll();
  const server = pgServer;
  pgServer = undefined;
  if (server) await Promise.race([server.stop(), grace(12_000)]);
  pgRoot = undefined;
}

// Whatever happens, the bench stops by itself: a hard limit well past the budget.
const watchdog = setTimeout(() => {
  process.stderr.write(`replicas: still running ${Math.round(elapsed() / 1000)} s after start; giving up\n`);
  void stopEverything().finally(() => process.exit(1));
}, BUDGET_MS + 150_000);
watchdog.unref();

// ---------------------------------------------------------------- small HTTP helpers

interface Closable {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

/** Forwards one request to `base` (http://127.0.0.1:port) and pipes the answer back; resolves when it ended. */
function forward(base: string, req: IncomingMessage, body: Buffer, res: ServerResponse, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const target = new URL(req.url ?? "/", base);
    const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
    const up = httpRequest({ hostname: target.hostname, port: target.port, method: req.method, path: `${target.pathname}${target.search}`, headers, timeout: timeoutMs }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
      upRes.on("end", () => resolve(upRes.statusCode ?? 502));
      upRes.on("error", () => resolve(502));
    });
    const fail = () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("bench proxy: upstream failed");
      else res.destroy();
      resolve(502);
    };
    up.on("timeout", () => up.destroy(new Error("timeout")));
    up.on("error", fail);
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(body);
  });
}

/** What one delaying front saw: requests at once, and how long they were in flight in all. */
interface FrontStats {
  requests: number;
  maxInFlight: number;
  /** Sum of the requests' times in flight (ms): slot use, as the model sees it. */
  busyMs: number;
  firstAt: number;
  lastEndAt: number;
}

/**
 * The model: one emulator, and in front of it one delaying proxy per replica (chat completions wait
 * `delayMs` before the emulator answers them), so that each replica's use of its turn slots shows.
 */
async function startDelayedModel(delayMs: number, fronts: number): Promise<Closable & { model: OpenAIEmulator; baseURLs: string[]; stats: FrontStats[] }> {
  const model = await startOpenAIEmulator();
  model.setFallback(answerStep);
  const upstream = new URL(model.baseURL).origin;
  const stats: FrontStats[] = [];
  const https: Array<{ url: string; close(): Promise<void> }> = [];
  for (let i = 0; i < fronts; i++) {
    const st: FrontStats = { requests: 0, maxInFlight: 0, busyMs: 0, firstAt: Number.NaN, lastEndAt: Number.NaN };
    let inFlight = 0;
    const server = createServer((req, res) => {
      void readAll(req).then(async (body) => {
        const isChat = req.method === "POST" && (req.url ?? "").includes("/chat/completions");
        if (!isChat) return void (await forward(upstream, req, body, res, 30_000));
        const t0 = Date.now();
        st.requests++;
        if (!Number.isFinite(st.firstAt)) st.firstAt = t0;
        st.maxInFlight = Math.max(st.maxInFlight, ++inFlight);
        try {
          await sleep(delayMs);
          if (!res.destroyed) await forward(upstream, req, body, res, 30_000);
        } finally {
          inFlight--;
          const t1 = Date.now();
          st.busyMs += t1 - t0;
          st.lastEndAt = t1;
        }
      }, () => res.destroy());
    });
    stats.push(st);
    https.push(await listen(server));
  }
  return {
    model,
    url: https[0]!.url,
    baseURLs: https.map((h) => `${h.url}/v1`),
    stats,
    async close() {
      for (const h of https) await h.close();
      await model.close();
    },
  };
}

type LooseMessage = { role?: string; content?: unknown };
const textOf = (content: unknown): string =>
  typeof content === "string" ? content
  : Array.isArray(content) ? content.map((p) => (typeof p === "object" && p && "text" in p ? String((p as { text: unknown }).text) : "")).join("")
  : "";

/** The bench model: "answer to qN." for the question "qN" in the last user message. */
function answerStep(request: RecordedRequest): Step {
  const messages = (request.body.messages ?? []) as LooseMessage[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const q = /\bq(\d+)\b/.exec(textOf(lastUser?.content))?.[1];
  return { text: q !== undefined ? `answer to q${q}.` : "answer to nothing." };
}
const ANSWER = /answer to q(\d+)\b/;

/** The balancer: each POST goes to the next upstream in turn (round-robin per request, as nginx does). */
async function startBalancer(upstreams: string[]): Promise<Closable & { perUpstream: number[]; failures: () => number }> {
  const perUpstream = upstreams.map(() => 0);
  let next = 0;
  let failures = 0;
  const server = createServer((req, res) => {
    const index = next++ % upstreams.length;
    perUpstream[index]!++;
    void readAll(req).then(async (body) => {
      const status = await forward(upstreams[index]!, req, body, res, 10_000);
      if (status >= 500) failures++;
    }, () => res.destroy());
  });
  const http = await listen(server);
  return { ...http, perUpstream, failures: () => failures };
}

// ---------------------------------------------------------------- a replica

interface ReplicaStats {
  /** Events delivered to it (envelope.received) and dropped as already seen (dedupe.dropped). */
  received: number;
  dropped: number;
  finished: number;
  failedTurns: number;
  /** Turns it finished for a message another replica received. */
  crossReplica: number;
  /** Warn/error lines: message → count. */
  warnings: Map<string, number>;
}

interface Replica {
  name: string;
  port: number;
  proc: ManagedProcess;
  stats: ReplicaStats;
}

/** Parses a replica's pino lines as they come (all of them, not only the kept tail). */
function follow(replica: Replica, receivedBy: Map<string, string>): void {
  let carry = "";
  const onLine = (line: string) => {
    if (!line.startsWith("{")) {
      if (line.trim()) bump(replica.stats.warnings, line.trim().slice(0, 140).replace(/\d{3,}/g, "N"));
      return;
    }
    let entry: { level?: number; msg?: string; event?: string; traceId?: string; status?: string; err?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    const s = replica.stats;
    if (entry.event === "envelope.received" && entry.traceId) {
      s.received++;
      receivedBy.set(entry.traceId, replica.name);
    } else if (entry.event === "dedupe.dropped") s.dropped++;
    // A turn's end at the default level: its reply, with the turn's status.
    else if (entry.event === "reply.delivered" || entry.event === "reply.failed") {
      s.finished++;
      if (entry.status === "failed") s.failedTurns++;
      if (entry.traceId && receivedBy.has(entry.traceId) && receivedBy.get(entry.traceId) !== replica.name) s.crossReplica++;
    }
    if (typeof entry.level === "number" && entry.level >= 40) {
      const err = typeof entry.err === "string" ? entry.err : (entry.err as { message?: string } | undefined)?.message;
      bump(s.warnings, `${entry.msg ?? "(no msg)"}${err ? `: ${String(err).slice(0, 100)}` : ""}`.replace(/\d{3,}/g, "N"));
    }
  };
  const onData = (d: Buffer) => {
    const text = carry + d.toString();
    const lines = text.split("\n");
    carry = lines.pop() ?? "";
    for (const l of lines) onLine(l);
  };
  replica.proc.child.stdout!.on("data", onData);
  replica.proc.child.stderr!.on("data", onData);
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

async function startReplica(name: string, env: Record<string, string>, receivedBy: Map<string, string>): Promise<Replica> {
  const port = await freePort();
  const dir = makeTempDir(`gh-bench-${name}-`);
  const proc = spawnNode({
    name,
    script: "bin/gatehouse.js",
    args: ["start"],
    dir,
    env: { GATEHOUSE_DATA_DIR: path.join(dir, "data"), PORT: String(port), LOG_LEVEL: "info", ...env },
  });
  const replica: Replica = { name, port, proc, stats: { received: 0, dropped: 0, finished: 0, failedTurns: 0, crossReplica: 0, warnings: new Map() } };
  follow(replica, receivedBy);
  return replica;
}

/** Resolves when the replica's Slack endpoint answers (any status), or throws after `timeoutMs`. */
async function ready(replica: Replica, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (replica.proc.exited()) throw new Error(`${replica.name} exited before it was ready:\n${replica.proc.output().slice(-2000)}`);
    // A signed url_verification, as Slack sends when the endpoint is configured: no warning in the log.
    const body = JSON.stringify({ type: "url_verification", token: "bench", challenge: "ready" });
    const ts = Math.floor(Date.now() / 1000);
    const status = await fetch(`http://127.0.0.1:${replica.port}/slack/events`, {
      method: "POST", body, signal: AbortSignal.timeout(2000),
      headers: { "content-type": "application/json", "x-slack-request-timestamp": String(ts), "x-slack-signature": slackSignature(SIGNING_SECRET, ts, body) },
    }).then((r) => r.status, () => undefined);
    if (status !== undefined) return;
    if (Date.now() > deadline) throw new Error(`${replica.name}: its endpoint did not answer within ${timeoutMs} ms:\n${replica.proc.output().slice(-2000)}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------- machine CPU

function cpuTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = sum(line.slice(0, 8));
  const idle = (line[3] ?? 0) + (line[4] ?? 0);
  return { busy: total - idle, total };
}

// ---------------------------------------------------------------- one round

interface RoundResult {
  setup: Setup;
  ok: boolean;
  error?: string;
  messages: number;
  answered: number;
  lost: number;
  duplicates: number;
  throughput: number;
  p50: number;
  p99: number;
  elapsedMs: number;
  end: "complete" | "idle" | "cap" | "exited" | "error";
  startupMs: number;
  /** Event POSTs that failed or did not get a 2xx (from the emulator's side). */
  deliveryFailures: number;
  ackP99: number;
  /** Bot messages that are not answers (notices, errors): text (digits as N) → count. */
  otherTexts: Map<string, number>;
  replicas: Array<{ name: string } & Omit<ReplicaStats, "warnings"> & { cpuMs: number; rssMb: number }>;
  warnings: Map<string, number>;
  botCpuPerAnswer: number;
  machineBusy: number;
  modelMaxInFlight: number;
  /** Per replica: model requests, busy share of its slots while it worked, when its last one ended (ms after the posts). */
  slots: Array<{ requests: number; maxInFlight: number; utilization: number; doneAfterMs: number; accepted: number }>;
  modelRequests: number;
  balancer: number[];
  /** From PostgreSQL after the round: lease acquisitions tried (the lease token sequence), what was left. */
  db?: { leaseAttempts: number; inboxLeft: number; leasesLeft: number; inflightLeft: number; turnsLeft: number };
  calls: Record<string, number>;
}

async function dbFigures(url: string): Promise<RoundResult["db"]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const one = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? Number.NaN);
    const seq = await client.query<{ last_value: string; is_called: boolean }>("SELECT last_value, is_called FROM lease_tokens");
    const leaseAttempts = seq.rows[0] ? (seq.rows[0].is_called ? Number(seq.rows[0].last_value) : 0) : Number.NaN;
    return {
      leaseAttempts,
      inboxLeft: await one("SELECT count(*) AS n FROM inbox"),
      leasesLeft: await one("SELECT count(*) AS n FROM session_leases"),
      inflightLeft: await one("SELECT count(*) AS n FROM kv WHERE key LIKE 'inflight:%'"),
      turnsLeft: await one("SELECT count(*) AS n FROM turns"),
    };
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function runRound(setup: Setup, conversations: number): Promise<RoundResult> {
  const closers: Array<() => Promise<unknown>> = [];
  const replicas: Replica[] = [];
  const shared = makeTempDir("gh-bench-replicas-");
  const result: RoundResult = {
    setup, ok: false, messages: conversations, answered: 0, lost: conversations, duplicates: 0, throughput: Number.NaN, p50: Number.NaN,
    p99: Number.NaN, elapsedMs: Number.NaN, end: "error", startupMs: Number.NaN, deliveryFailures: 0, ackP99: Number.NaN, otherTexts: new Map(),
    replicas: [], warnings: new Map(), botCpuPerAnswer: Number.NaN, machineBusy: Number.NaN, modelMaxInFlight: 0, modelRequests: 0, slots: [], balancer: [], calls: {},
  };
  try {
    const channels = Array.from({ length: conversations }, (_, i) => `C0BENCH${String(i).padStart(4, "0")}`);
    // chat.update is not what is measured: its workspace limit is raised out of reach.
    const slack: SlackEmulator = await startSlackEmulator({ channels, updatesPerMinute: 1_000_000, ...(MENTION_ONLY ? { subscriptions: ["app_mention" as const] } : {}) });
    closers.push(() => slack.close());
    const model = await startDelayedModel(MODEL_DELAY_MS, replicaCount(setup));
    closers.push(() => model.close());
    const config = path.join(shared, "gatehouse.json");
    writeFileSync(config, JSON.stringify({ gateway: { maxConcurrentTurns: MAX_TURNS, ...(LEASE_TTL_MS ? { leaseTtlMs: LEASE_TTL_MS } : {}) } }));
    const databaseUrl = setup !== "one" ? await pgServer!.createDatabase() : undefined;
    const receivedBy = new Map<string, string>();
    const env = {
      SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.apiUrl,
      OPENAI_API_KEY: "bench-key", GATEHOUSE_CONFIG: config,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const t0 = Date.now();
    for (let i = 0; i < replicaCount(setup); i++) {
      const name = replicaCount(setup) > 1 ? `replica-${"ab"[i]}` : "replica";
      replicas.push(await startReplica(name, { ...env, OPENAI_BASE_URL: model.baseURLs[i]! }, receivedBy));
    }
    await Promise.all(replicas.map((r) => ready(r, 45_000)));
    result.startupMs = Date.now() - t0;
    const balancer = await startBalancer(replicas.map((r) => `http://127.0.0.1:${r.port}`));
    closers.push(() => balancer.close());
    slack.useHttp({ url: `${balancer.url}/slack/events`, signingSecret: SIGNING_SECRET });
    await sleep(500); // let the replicas' first sweeps and start-up work pass

    // ---- the load: every conversation's mention at once
    const callsFrom = slack.world.calls.length;
    const acksFrom = slack.world.acks.length;
    const cpu0 = replicas.map((r) => r.proc.cpuMs());
    const machine0 = cpuTicks();
    const postedAt = new Map<number, number>();
    const since = Date.now();
    const posts = channels.map((channel, i) => {
      postedAt.set(i, Date.now());
      return slack.userPosts({ user: i % 2 ? "U0BOB" : "U0ALICE", channel, text: `<@${slack.botUserId}> question q${i}, please` }).then(
        ({ deliveries }) => deliveries.filter((d) => d.status === undefined || d.status < 200 || d.status >= 300).length,
        () => 1,
      );
    });
    const delivered = Promise.all(posts).then((failures) => (result.deliveryFailures = sum(failures)));

    // ---- follow the answers (a bot post in the question's thread holding "answer to qN")
    const answers = new Map<number, number[]>();
    let scanned = callsFrom;
    let lastActivity = since;
    let modelSeen = model.model.requests.length;
    const scan = () => {
      const calls = slack.world.calls;
      for (; scanned < calls.length; scanned++) {
        const call = calls[scanned]!;
        lastActivity = Math.max(lastActivity, call.at);
        if (call.result !== "ok" || (call.method !== "chat.postMessage" && call.method !== "chat.update")) continue;
        const text = String(call.args.text ?? "");
        const m = ANSWER.exec(text);
        const channelIndex = channels.indexOf(String(call.args.channel));
        if (m && call.method === "chat.postMessage") {
          const q = Number(m[1]);
          const list = answers.get(q) ?? [];
          // An answer in another conversation than its question's counts as a duplicate (and not as the answer).
          list.push(channelIndex === q ? call.at : Number.NaN);
          answers.set(q, list);
        } else if (!m) {
          bump(result.otherTexts, `${call.method}: ${text.replace(/\d+/g, "N").slice(0, 90)}`);
        }
      }
      if (model.model.requests.length !== modelSeen) {
        modelSeen = model.model.requests.length;
        lastActivity = Date.now();
      }
    };
    const answeredCount = () => [...answers.values()].filter((l) => l.some((t) => Number.isFinite(t))).length;
    let end: RoundResult["end"] = "complete";
    for (;;) {
      scan();
      if (answeredCount() >= conversations) break;
      const now = Date.now();
      if (replicas.some((r) => r.proc.exited())) {
        end = "exited";
        break;
      }
      if (now - since > ROUND_CAP_MS) {
        end = "cap";
        break;
      }
      if (now - lastActivity > IDLE_MS) {
        end = "idle";
        break;
      }
      await sleep(25);
    }
    const endedAt = Date.now();
    const machine1 = cpuTicks();
    const cpuMs = sum(replicas.map((r, i) => r.proc.cpuMs() - cpu0[i]!));
    await Promise.race([delivered, grace(6000)]);
    await sleep(LATE_MS);
    scan();

    const latencies: number[] = [];
    let lastAnswer = Number.NaN;
    let duplicates = 0;
    for (const [q, list] of answers) {
      const good = list.filter((t) => Number.isFinite(t));
      duplicates += list.length - Math.min(1, good.length);
      if (!good.length) continue;
      const first = Math.min(...good);
      latencies.push(first - postedAt.get(q)!);
      lastAnswer = Number.isFinite(lastAnswer) ? Math.max(lastAnswer, first) : first;
    }
    const answered = latencies.length;
    const elapsedMs = (Number.isFinite(lastAnswer) ? lastAnswer : endedAt) - since;
    const acks = slack.world.acks.slice(acksFrom).map((a) => a.ms ?? Number.NaN).filter(Number.isFinite);
    const calls: Record<string, number> = {};
    for (const c of slack.world.calls.slice(callsFrom)) calls[c.method] = (calls[c.method] ?? 0) + 1;
    Object.assign(result, {
      ok: true, answered, lost: conversations - answered, duplicates, throughput: answered / (elapsedMs / 1000),
      p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), elapsedMs, end,
      ackP99: percentile(acks, 0.99), botCpuPerAnswer: answered ? cpuMs / answered : Number.NaN,
      machineBusy: (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total),
      modelMaxInFlight: sum(model.stats.map((f) => f.maxInFlight)), modelRequests: model.model.requests.length, balancer: [...balancer.perUpstream], calls,
    });
    // The balancer's 5xx are seen by the emulator too; the larger count covers both sides.
    result.deliveryFailures = Math.max(result.deliveryFailures, balancer.failures());
    if (databaseUrl) result.db = await dbFigures(databaseUrl);
    result.slots = model.stats.map((f, i) => ({
      requests: f.requests,
      maxInFlight: f.maxInFlight,
      utilization: f.busyMs / (MAX_TURNS * Math.max(1, f.lastEndAt - since)),
      doneAfterMs: f.lastEndAt - since,
      accepted: replicas[i]!.stats.received - replicas[i]!.stats.dropped,
    }));
    for (const r of replicas) {
      const mem = r.proc.memoryMb();
      result.replicas.push({ name: r.name, received: 0, dropped: 0, finished: 0, failedTurns: 0, crossReplica: 0, cpuMs: r.proc.cpuMs(), rssMb: mem.rss });
    }
    return result;
  } catch (error) {
    result.ok = false;
    result.error = (error as Error).message;
    return result;
  } finally {
    // SIGTERM: each replica finishes what it holds (nothing, after a complete round) and exits.
    await Promise.all(replicas.map((r) => r.proc.stop(result.end === "complete" ? 10_000 : 4_000)));
    for (const r of replicas) {
      const row = result.replicas.find((x) => x.name === r.name);
      if (row) Object.assign(row, { received: r.stats.received, dropped: r.stats.dropped, finished: r.stats.finished, failedTurns: r.stats.failedTurns, crossReplica: r.stats.crossReplica });
      for (const [k, n] of r.stats.warnings) bump(result.warnings, `${r.name}: ${k}`, n);
    }
    for (const close of closers.reverse()) await close().catch(() => undefined);
    removeTempDir(shared);
  }
}

function describe(r: RoundResult): string {
  if (!r.ok) return `${LABEL[r.setup]}: FAILED (${(r.error ?? "").split("\n").filter((l) => l.trim()).slice(0, 3).join(" | ")})`;
  const per = r.replicas.map((x, i) => {
    const slot = r.slots[i];
    const use = slot ? `, slots ${fmt(slot.utilization * 100, 0)}% busy, last model reply at ${fmt(slot.doneAfterMs / 1000, 1)} s` : "";
    return `${x.name} accepted ${x.received - x.dropped} of ${x.received} events, finished ${x.finished}${x.crossReplica ? ` (${x.crossReplica} accepted by the other)` : ""}${use}`;
  }).join("; ");
  const db = r.db ? `, lease tries ${r.db.leaseAttempts}, left: inbox ${r.db.inboxLeft} leases ${r.db.leasesLeft} inflight ${r.db.inflightLeft} turns ${r.db.turnsLeft}` : "";
  return [
    `${LABEL[r.setup].padEnd(22)} ${r.answered}/${r.messages} in ${(r.elapsedMs / 1000).toFixed(1)} s (${fmt(r.throughput, 1)}/s, ${r.end})`,
    `p50 ${fmt(r.p50, 0)} ms p99 ${fmt(r.p99, 0)} ms`,
    `dup ${r.duplicates}`,
    ...(r.otherTexts.size ? [`other posts ${sum([...r.otherTexts.values()])}`] : []),
    `model ≤${r.modelMaxInFlight} at once, ${r.modelRequests} requests`,
    `bot cpu ${fmt(r.botCpuPerAnswer, 1)} ms/answer, machine ${fmt(r.machineBusy * 100, 0)}% busy`,
    `ack p99 ${fmt(r.ackP99, 0)} ms${r.deliveryFailures ? `, ${r.deliveryFailures} failed deliveries` : ""}`,
    `startup ${r.startupMs} ms`,
  ].join(", ") + `\n      ${per}${db}`;
}

// ---------------------------------------------------------------- main

out(`conversations: ${CONVERSATIONS} (one mention each, own channel), model delay ${MODEL_DELAY_MS} ms, gateway.maxConcurrentTurns ${MAX_TURNS} per replica${LEASE_TTL_MS ? `, leaseTtlMs ${LEASE_TTL_MS}` : ""}`);
if (MENTION_ONLY) out(`events: app_mention only (one event per post)`);
out(`rounds: ${ROUNDS} per setup after a warm-up of each (${WARMUP_CONVERSATIONS} conversations), time budget ${BUDGET_MS / 1000} s`);
out(`ideal: one replica ≈ ${fmt((MAX_TURNS * 1000) / Math.max(1, MODEL_DELAY_MS), 1)} answers/s, two ≈ ${fmt((2 * MAX_TURNS * 1000) / Math.max(1, MODEL_DELAY_MS), 1)} answers/s (slots × 1/delay)`);

const before = pgDirs();
try {
  pgServer = await startPostgres();
  pgRoot = [...pgDirs()].find((d) => !before.has(d));
  if (pgRoot) pgRoot = path.join(tmpdir(), pgRoot);
} catch (error) {
  out(`cannot run: ${(error as Error).message.split("\n").slice(0, 4).join(" | ")}`);
  await stopEverything();
  process.exit(1);
}

const results: Record<Setup, RoundResult[]> = { one: [], two: [], onepg: [] };
const pairMs: number[] = [];
let budgetCut = false;
try {
  for (const setup of SETUPS) out(`warm-up   ${describe(await runRound(setup, WARMUP_CONVERSATIONS))}`);
  for (let pass = 0; pass < ROUNDS; pass++) {
    const estimate = pairMs.length ? sum(pairMs) / pairMs.length : 0;
    if (pass > 0 && elapsed() + estimate > BUDGET_MS) {
      budgetCut = true;
      break;
    }
    const pairStart = Date.now();
    const order: Setup[] = pass % 2 === 0 ? SETUPS : [...SETUPS].reverse();
    out(`\nround ${pass + 1}`);
    for (const setup of order) {
      const r = await runRound(setup, CONVERSATIONS);
      results[setup].push(r);
      out(`  ${describe(r)}`);
    }
    pairMs.push(Date.now() - pairStart);
  }
} finally {
  await stopEverything();
}

// ---------------------------------------------------------------- report

type Pick = (r: RoundResult) => number;
const ok = (s: Setup) => results[s].filter((r) => r.ok);
const med = (s: Setup, pick: Pick) => median(ok(s).map(pick));
const total = (s: Setup, pick: Pick) => sum(results[s].map(pick));
const verdict = (pass: boolean) => (pass ? "PASS" : "FAIL");
const measured = ok("one").length > 0 && ok("two").length > 0;
const extra = WITH_PG1 ? (["onepg"] as const) : [];

const rows: string[][] = [];
const metric = (name: string, pick: Pick, target?: { atLeast?: number; atMost?: number }, digits?: number) => {
  const one = med("one", pick);
  const two = med("two", pick);
  const q = ratio(two, one);
  const t = target ? (target.atLeast !== undefined ? `≥ ${target.atLeast}× one` : `≤ ${target.atMost}× one`) : "";
  const pass = target ? measured && (target.atLeast !== undefined ? q >= target.atLeast : q <= target.atMost!) : undefined;
  rows.push([name, fmt(one, digits), fmt(two, digits), Number.isFinite(q) ? `${q.toFixed(2)}×` : "n/a", t, pass === undefined ? "" : verdict(pass), ...extra.map((s) => fmt(med(s, pick), digits))]);
};
const count = (name: string, pick: Pick, mustBeZero: boolean) => {
  const one = total("one", pick);
  const two = total("two", pick);
  const allOk = results.one.every((r) => r.ok) && results.two.every((r) => r.ok);
  rows.push([name, fmt(one, 0), fmt(two, 0), "", mustBeZero ? "0 (both)" : "", mustBeZero ? verdict(measured && allOk && one === 0 && two === 0) : "", ...extra.map((s) => fmt(total(s, pick), 0))]);
};
const slotUse = (r: RoundResult) => median(r.slots.map((x) => x.utilization * 100));
const imbalance = (r: RoundResult) => (r.replicas.length > 1 ? Math.max(...r.replicas.map((x) => x.finished)) / (r.answered / r.replicas.length) : 1);
metric("answers/s", (r) => r.throughput, { atLeast: 1.6 });
metric("p50 latency (ms)", (r) => r.p50, undefined, 0);
metric("p99 latency (ms)", (r) => r.p99, { atMost: 1.2 }, 0);
count("lost answers (all rounds)", (r) => r.lost, true);
count("duplicated answers (all rounds)", (r) => r.duplicates, true);
count("failed event deliveries", (r) => r.deliveryFailures, false);
metric("turn slots busy while working (%)", slotUse, undefined, 0);
metric("busiest replica's share / fair share", imbalance, undefined, 2);
metric("event ack p99 (ms)", (r) => r.ackP99, undefined, 0);
metric("bot CPU ms / answer (all replicas)", (r) => r.botCpuPerAnswer, undefined, 1);
metric("machine CPU busy, all processes (%)", (r) => r.machineBusy * 100, undefined, 0);
metric("model requests at once (max)", (r) => r.modelMaxInFlight, undefined, 0);
rows.push(["rounds", `${ok("one").length}/${results.one.length}`, `${ok("two").length}/${results.two.length}`, "", String(ROUNDS), budgetCut ? "(time budget)" : "", ...extra.map((s) => `${ok(s).length}/${results[s].length}`)]);
out(`\nReplicas: ${CONVERSATIONS} Slack conversations, model ${MODEL_DELAY_MS} ms per request, ${MAX_TURNS} turn slots per replica (medians; counts are totals)`);
out(renderTable(["metric", LABEL.one, LABEL.two, "ratio", "target", "verdict", ...extra.map((s) => `${LABEL[s]} (diagnostic)`)], rows));

// ---- how the replicas behaved
const notes: string[] = [];
for (const r of SETUPS.flatMap((s) => results[s])) {
  if (!r.ok) notes.push(`a ${LABEL[r.setup]} round failed: ${(r.error ?? "").split("\n").slice(0, 3).join(" | ")}`);
  else if (r.end !== "complete") notes.push(`a ${LABEL[r.setup]} round ended "${r.end}" with ${r.lost} of ${r.messages} answers missing (counted as lost)`);
}
const two = ok("two");
if (two.length) {
  const perRound = two.map((r) => `${r.replicas.map((x) => x.finished).join("/")} → ${fmt(r.throughput, 1)}/s, last replies at ${r.slots.map((x) => fmt(x.doneAfterMs / 1000, 1)).join("/")} s`);
  const cross = sum(two.flatMap((r) => r.replicas.map((x) => x.crossReplica)));
  const tries = two.map((r) => r.db?.leaseAttempts ?? Number.NaN);
  notes.push(`two replicas: turns finished per replica (a/b) per round: ${perRound.join("; ")}`);
  notes.push(
    `two replicas: a message's turn runs on the replica that accepted it (its event won the dedupe) while that one has room (two threads per turn slot), ` +
      `else on whichever replica has room first: ${cross} turns in all ran on the replica that had not accepted the message`,
  );
  notes.push(`two replicas: session lease acquisitions tried per round: ${tries.map((t) => fmt(t, 0)).join(", ")} (for ${CONVERSATIONS} sessions of one message each; more = kicks and sweeps racing for the same lease)`);
  const left = two.filter((r) => r.db && (r.db.inboxLeft || r.db.leasesLeft || r.db.inflightLeft || r.db.turnsLeft));
  if (left.length) notes.push(`two replicas: ${left.length} round(s) left rows behind in the database after the last answer (inbox / leases / inflight / turns): ${left.map((r) => `${r.db!.inboxLeft}/${r.db!.leasesLeft}/${r.db!.inflightLeft}/${r.db!.turnsLeft}`).join(", ")}`);
  notes.push(`two replicas: event POSTs per replica from the balancer per round: ${two.map((r) => r.balancer.join("/")).join(", ")}${MENTION_ONLY ? "" : " (each post is two events, message and app_mention: one is answered, the other dropped as a duplicate)"}`);
}
for (const setup of SETUPS) {
  const failedTurns = total(setup, (r) => sum(r.replicas.map((x) => x.failedTurns)));
  if (failedTurns) notes.push(`${LABEL[setup]}: ${failedTurns} turns ended "failed"`);
}
if (notes.length) {
  out(`\nnotes:`);
  for (const n of notes) out(`  - ${n}`);
}
for (const setup of SETUPS) {
  const texts = new Map<string, number>();
  const warnings = new Map<string, number>();
  for (const r of results[setup]) {
    for (const [k, n] of r.otherTexts) bump(texts, k, n);
    for (const [k, n] of r.warnings) bump(warnings, k.replace(/^replica(-[ab])?: /, ""), n);
  }
  if (texts.size) {
    out(`\n${LABEL[setup]}: bot posts that were not answers (all measured rounds):`);
    for (const [k, n] of [...texts].sort((a, b) => b[1] - a[1]).slice(0, 8)) out(`  ${String(n).padStart(6)} × ${JSON.stringify(k)}`);
  }
  if (warnings.size) {
    out(`\n${LABEL[setup]}: warnings and errors in the replicas' logs (all measured rounds):`);
    for (const [k, n] of [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 10)) out(`  ${String(n).padStart(6)} × ${k}`);
  }
}
const perMessage = (setup: Setup) => {
  const calls = new Map<string, number>();
  for (const r of ok(setup)) for (const [k, n] of Object.entries(r.calls)) bump(calls, k, n);
  const messages = Math.max(1, sum(ok(setup).map((r) => r.messages)));
  return [...calls].map(([k, n]) => `${k} ${(n / messages).toFixed(2)}`).join(", ");
};
out(`\nSlack Web API calls per message: ${SETUPS.map((s) => `${s}: ${perMessage(s) || "n/a"}`).join("; ")}`);
out(`\ntotal time ${Math.round(elapsed() / 1000)} s`);
clearTimeout(watchdog);
