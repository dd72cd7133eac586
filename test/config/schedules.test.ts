import { describe, expect, it } from "vitest";
import { ScheduleSchema } from "../../src/config/schedules.ts";

const base = { name: "report", prompt: "write the report", deliverTo: "telegram:-100500" };

describe("a schedule in the config", () => {
  it("refuses a time zone the machine does not know, naming the key and what is expected", () => {
    for (const timezone of ["Mars/Olympus", "Europe/Berln", ""]) {
      const parsed = ScheduleSchema.safeParse({ ...base, cron: "0 9 * * 1-5", timezone });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([
        ["timezone", `not an IANA time zone: "${timezone}" (e.g. "Europe/Berlin", "America/New_York", "UTC")`],
      ]);
    }
  });

  it("takes real time zones, and a schedule that fires only on 29 February", () => {
    for (const timezone of ["Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata"]) {
      expect(ScheduleSchema.safeParse({ ...base, cron: "0 9 * * 1-5", timezone }).success).toBe(true);
    }
    expect(ScheduleSchema.safeParse({ ...base, cron: "0 0 29 2 *" }).success).toBe(true);
  });

  it("refuses an expression that never fires, such as 30 February", () => {
    const parsed = ScheduleSchema.safeParse({ ...base, cron: "0 0 30 2 *" });
    expect(parsed.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([["cron", '"0 0 30 2 *" never fires (no such date)']]);
  });
});
