import { describe, expect, it } from "vitest";
import { currentTimeTool } from "../../src/tools/builtin/current-time.ts";
import { contextFor } from "./context.ts";

const fixed = () => new Date("2025-03-01T12:00:00.000Z");

describe("current_time", () => {
  it("tells the time in UTC when no zone is given", async () => {
    const result = await currentTimeTool({ now: fixed }).execute({}, contextFor("/tmp"));
    expect(result).toEqual({ success: true, output: "2025-03-01T12:00:00+00:00 (Saturday, UTC)\nUTC: 2025-03-01T12:00:00.000Z" });
  });

  it("tells UTC exactly as the IANA zone Etc/UTC is told, on every weekday and at the ends of a day", async () => {
    for (let day = 0; day < 7; day++) {
      for (const ms of [0, 86_399_999, 32_707_250]) {
        // From Sunday 25 February 2024 on, across the leap day.
        const instant = new Date(Date.UTC(2024, 1, 25 + day) + ms);
        const utc = await currentTimeTool({ now: () => instant }).execute({ timezone: "UTC" }, contextFor("/tmp"));
        const etc = await currentTimeTool({ now: () => instant }).execute({ timezone: "Etc/UTC" }, contextFor("/tmp"));
        expect(utc.output).toBe(etc.output.replace("Etc/UTC", "UTC"));
      }
    }
  });

  it("tells the local time with its offset in an IANA zone", async () => {
    const result = await currentTimeTool({ now: fixed }).execute({ timezone: "Asia/Kolkata" }, contextFor("/tmp"));
    expect(result.output.split("\n")[0]).toBe("2025-03-01T17:30:00+05:30 (Saturday, Asia/Kolkata)");
  });

  it("reports an unknown zone as an error the model can fix", async () => {
    const result = await currentTimeTool().execute({ timezone: "Mars/Olympus" }, contextFor("/tmp"));
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^unknown time zone "Mars\/Olympus": use an IANA name/);
  });

  it("tells the real time by default", async () => {
    const before = Date.now();
    const result = await currentTimeTool().execute({}, contextFor("/tmp"));
    const utc = Date.parse(result.output.split("UTC: ")[1]);
    expect(utc).toBeGreaterThanOrEqual(before - 1000);
    expect(utc).toBeLessThanOrEqual(Date.now() + 1000);
  });
});
