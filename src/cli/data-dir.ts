/**
 * Where the data folder is, for commands that must work even when the rest of the
 * configuration is broken (`logs`, `status`, `doctor`): the configured `dataDir`, else `./data`.
 */
import path from "node:path";
import { rawConfig } from "../config/load.ts";

/** The absolute data folder, read leniently (an invalid config elsewhere does not matter here). */
export function resolveDataDir(cwd = process.cwd()): string {
  let configured: unknown;
  try {
    configured = rawConfig({ cwd }).raw.dataDir;
  } catch {
    // An unreadable config file: the environment alone decides.
    configured = process.env.GATEHOUSE_DATA_DIR;
  }
  return path.resolve(cwd, typeof configured === "string" && configured ? configured : "./data");
}
