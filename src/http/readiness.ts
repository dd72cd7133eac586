/**
 * Whether the bot is ready to serve, for `GET /readyz`: it finished starting, every channel it
 * runs is connected (the adapter's own `health()` where it has one), the store answers, and the
 * model endpoint answered at start. A model endpoint that did not answer at start is asked again
 * (at most every `modelRecheckMs`), so a bot started before its model server becomes ready once
 * that server is up.
 */

/** One thing readiness looks at, and what is wrong with it. */
export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/** The answer of `/readyz`: 200 with `ready`, else 503 with every reason. */
export interface ReadinessReport {
  status: "ready" | "not ready";
  /** What keeps the bot from being ready, one line each (empty when ready). */
  reasons: string[];
  checks: Record<string, ReadinessCheck>;
}

/** A channel as readiness sees it: its name and, once started, its health. */
interface ChannelState {
  name: string;
  started: boolean;
  health?: () => { ok: boolean; detail?: string };
}

const STORE_TIMEOUT_MS = 1000;

export class Readiness {
  private readonly channels: ChannelState[];
  private startup: ReadinessCheck = { ok: false, detail: "starting" };
  private store: ReadinessCheck & { probe?: () => Promise<unknown> } = { ok: false, detail: "not open yet" };
  private model: ReadinessCheck = { ok: false, detail: "not checked yet" };
  private recheckModel?: () => Promise<ReadinessCheck>;
  private lastModelCheck = 0;
  private readonly modelRecheckMs: number;

  /** `channels`: the names of the channels the bot is about to start. */
  constructor(channels: readonly string[], options: { modelRecheckMs?: number } = {}) {
    this.channels = channels.map((name) => ({ name, started: false }));
    this.modelRecheckMs = options.modelRecheckMs ?? 15_000;
  }

  /** The store is open; `probe` makes a cheap read, to tell an open store from a broken one. */
  storeOpened(probe: () => Promise<unknown>): void {
    this.store = { ok: true, probe };
  }

  /** What the model endpoint check at start found; `recheck` asks again while it fails. */
  modelChecked(check: ReadinessCheck, recheck?: () => Promise<ReadinessCheck>): void {
    this.model = check;
    this.recheckModel = check.ok ? undefined : recheck;
    this.lastModelCheck = Date.now();
  }

  /** A channel's adapter connected; its `health()` (if any) decides from now on. */
  channelStarted(adapter: { channel: string; health?: () => { ok: boolean; detail?: string } }): void {
    const state = this.channels.find((c) => c.name === adapter.channel && !c.started);
    if (!state) return void this.channels.push({ name: adapter.channel, started: true, health: adapter.health?.bind(adapter) });
    state.started = true;
    state.health = adapter.health?.bind(adapter);
  }

  /** The bot finished starting. */
  started(): void {
    this.startup = { ok: true };
  }

  /** The bot is shutting down: a load balancer should send nothing more. */
  stopping(): void {
    this.startup = { ok: false, detail: "shutting down" };
  }

  /** Looks at everything now. */
  async report(): Promise<ReadinessReport> {
    const checks: Record<string, ReadinessCheck> = { startup: this.startup, store: await this.storeCheck(), model: await this.modelCheck() };
    for (const c of this.channels) {
      const health = c.started ? (c.health?.() ?? { ok: true }) : { ok: false, detail: "not connected yet" };
      checks[`channel:${c.name}`] = health.ok ? { ok: true, ...(health.detail ? { detail: health.detail } : {}) } : { ok: false, detail: health.detail ?? "not connected" };
    }
    const reasons = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.detail ?? "not ready"}`);
    return { status: reasons.length ? "not ready" : "ready", reasons, checks };
  }

  private async storeCheck(): Promise<ReadinessCheck> {
    const probe = this.store.probe;
    if (!probe) return this.store;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS);
    });
    try {
      await Promise.race([probe(), timeout]);
      return { ok: true };
    } catch (error) {
      return { ok: false, detail: `does not answer: ${(error as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  private async modelCheck(): Promise<ReadinessCheck> {
    if (this.model.ok || !this.recheckModel || Date.now() - this.lastModelCheck < this.modelRecheckMs) return this.model;
    this.lastModelCheck = Date.now();
    this.model = await this.recheckModel();
    if (this.model.ok) this.recheckModel = undefined;
    return this.model;
  }
}
