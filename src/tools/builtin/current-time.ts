/**
 * `current_time`: the current date and time, in UTC or in an IANA time zone the model names,
 * so answers about "today" or "in two hours" are grounded in the real clock.
 */
import { z } from "zod";
import type { Tool } from "../tool.ts";
import { failed, succeeded } from "../result.ts";

const parameters = z.object({
  timezone: z.string().min(1).optional().describe('IANA time zone such as "Europe/Berlin"; UTC when omitted'),
});

/** Arguments of `current_time`. */
export type CurrentTimeArgs = z.infer<typeof parameters>;

/** Options of `current_time`; `now` exists so a caller can pin the clock. */
export interface CurrentTimeOptions {
  now?: () => Date;
}

/** Creates the `current_time` tool. */
export function currentTimeTool(options: CurrentTimeOptions = {}): Tool<CurrentTimeArgs> {
  const now = options.now ?? (() => new Date());
  return {
    name: "current_time",
    description: "Returns the current date and time as ISO 8601, in UTC or in the given IANA time zone.",
    parameters,
    risk: "read",
    replayable: true,
    owner: "builtin",
    hint: (args) => args.timezone ?? "UTC",
    async execute(args) {
      const instant = now();
      const zone = args.timezone ?? "UTC";
      const utc = instant.toISOString();
      // UTC, the usual case, needs no formatter: the ISO string is the local time.
      if (zone === "UTC") return succeeded(`${utc.slice(0, 19)}+00:00 (${WEEKDAYS[instant.getUTCDay()]}, UTC)\nUTC: ${utc}`);
      let local: string;
      try {
        local = isoInZone(instant, zone);
      } catch {
        return failed(`unknown time zone "${zone}": use an IANA name such as "Europe/Berlin" or "America/New_York"`);
      }
      const weekday = formatsFor(zone).weekday.format(instant);
      return succeeded(`${local} (${weekday}, ${zone})\nUTC: ${utc}`);
    },
  };
}

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Formatters per time zone: building one is far slower than using it. Bounded: zones are few, names many. */
const formats = new Map<string, { iso: Intl.DateTimeFormat; weekday: Intl.DateTimeFormat }>();

/** Throws RangeError for an unknown time zone (nothing is cached then). */
function formatsFor(zone: string): { iso: Intl.DateTimeFormat; weekday: Intl.DateTimeFormat } {
  let f = formats.get(zone);
  if (!f) {
    f = {
      iso: new Intl.DateTimeFormat("en-US", {
        timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "longOffset",
      }),
      weekday: new Intl.DateTimeFormat("en-US", { timeZone: zone, weekday: "long" }),
    };
    if (formats.size >= 200) formats.clear();
    formats.set(zone, f);
  }
  return f;
}

/** The instant as ISO 8601 local time in `zone` with its UTC offset ("2025-03-01T13:00:00+01:00"). */
function isoInZone(instant: Date, zone: string): string {
  const parts = formatsFor(zone).iso.formatToParts(instant);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const offsetName = get("timeZoneName"); // "GMT+01:00", or "GMT" at zero offset
  const offset = offsetName === "GMT" ? "+00:00" : offsetName.replace("GMT", "");
  return `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}${offset}`;
}
