/**
 * `gatehouse schedules [list]` — every schedule of the config with its cron, next run and last run
 * (as the store recorded it); `gatehouse schedules run <name>` — asks the running bot (any replica)
 * to run a schedule now, through the store. Exit 0 when done, 1 when the schedule is unknown, no bot
 * runs on the data folder (the embedded store: nobody would take the request), the running bot does
 * not run the schedule's channel, or the store cannot be read; 2 for bad usage.
 */
import { Cron } from "croner";
import { loadConfig } from "../config/load.ts";
import { SCHEDULE_LAST, SCHEDULE_RUN_REQUEST } from "../gateway/scheduler.ts";
import { parseConversationRef } from "../config/schedules.ts";
import { readRuntimeStatus } from "../observe/runtime-status.ts";
import { openStore } from "../store/open-store.ts";

const USAGE = "usage: gatehouse schedules [list] | gatehouse schedules run <name>\n";

export async function runSchedules(argv: string[]): Promise<number> {
  const [sub = "list", name, ...extra] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(`${USAGE}\nlist: each schedule's cron, next run and last run.\nrun <name>: the running bot runs it within a few seconds.\n`);
    return 0;
  }
  if ((sub !== "list" && sub !== "run") || extra.length || (sub === "run" && !name) || (sub === "list" && name)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = loadConfig();
  if (sub === "run" && !config.schedules.some((s) => s.name === name)) {
    process.stderr.write(`gatehouse: no schedule named "${name}" in the config (${config.schedules.map((s) => s.name).join(", ") || "none configured"})\n`);
    return 1;
  }
  if (sub === "run") {
    // With PostgreSQL the bots may run on other machines; on the embedded store, this folder's bot is the one.
    const bot = config.databaseUrl ? undefined : readRuntimeStatus(config.dataDir);
    if (!config.databaseUrl && !bot?.alive) {
      process.stderr.write(`gatehouse: no bot is running on the data folder ${config.dataDir}; start it first (nothing was asked)\n`);
      return 1;
    }
    const channel = parseConversationRef(config.schedules.find((s) => s.name === name)!.deliverTo).channel;
    if (bot?.snapshot && !bot.snapshot.channels.includes(channel)) {
      process.stderr.write(`gatehouse: the running bot does not run the ${channel} channel that "${name}" delivers to (it runs ${bot.snapshot.channels.join(", ")}); nothing was asked\n`);
      return 1;
    }
  }
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (sub === "run") {
      await store.setValue(`${SCHEDULE_RUN_REQUEST}${name}`, String(Date.now()));
      process.stdout.write(`Asked the bot to run "${name}" now; its answer goes where the schedule delivers.\n`);
      return 0;
    }
    if (!config.schedules.length) {
      process.stdout.write("No schedules configured (schedules in the config file).\n");
      return 0;
    }
    for (const s of config.schedules) {
      const next = new Cron(s.cron, { timezone: s.timezone, paused: true }).nextRun();
      const stored = await store.getValue(`${SCHEDULE_LAST}${s.name}`);
      const last = stored ? (JSON.parse(stored) as { at: string; outcome: string }) : undefined;
      process.stdout.write(
        `${s.name.padEnd(16)} ${s.cron.padEnd(16)} → ${s.deliverTo}\n` +
          `${"".padEnd(16)} next ${next?.toISOString() ?? "never"} · last ${last ? `${last.at} (${last.outcome})` : "never"}\n`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}
