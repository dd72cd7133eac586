import { describe, expect, it } from "vitest";
import { retryDelay } from "../../src/tools/mcp/connection.ts";

describe("MCP reconnect backoff", () => {
  it("waits 1s, 2s, 4s … and never more than 30s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 100].map((n) => retryDelay(n))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });
});
