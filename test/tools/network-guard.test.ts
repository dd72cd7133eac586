/**
 * Reaching the bot's own network through addresses that wrap a private one: local-use NAT64 to the
 * cloud metadata service, SIIT, Teredo, 6to4, documentation ranges. The guard accepts an address
 * only when ipaddr.js calls it public unicast, embedded IPv4 unwrapped first.
 */
import { describe, expect, it } from "vitest";
import { httpFetchTool } from "../../src/tools/builtin/http-fetch.ts";
import { isNonPublicAddress } from "../../src/tools/network-guard.ts";
import { contextFor } from "./context.ts";

describe("the network guard", () => {
  it("refuses the metadata address wrapped in local-use NAT64, as a literal and as a name's answer", async () => {
    const literal = await httpFetchTool({ timeoutMs: 1_000 }).execute({ url: "http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/" }, contextFor("/tmp"));
    expect(literal.error).toMatch(/^refused to fetch 64:ff9b:1::a9fe:a9fe: .*non-public/);
    const named = await httpFetchTool({ timeoutMs: 1_000, resolve: async () => ["64:ff9b:1::a9fe:a9fe"] }).execute({ url: "http://metadata.evil.example/" }, contextFor("/tmp"));
    expect(named.error).toMatch(/metadata\.evil\.example \(it resolves to 64:ff9b:1::a9fe:a9fe\)/);
  });

  it("judges every wrapped and special form as non-public", () => {
    for (const address of [
      "64:ff9b::a9fe:a9fe", // well-known NAT64 of 169.254.169.254
      "64:ff9b:1::a9fe:a9fe", // local-use NAT64
      "::ffff:0:a9fe:a9fe", // SIIT
      "::ffff:127.0.0.1", // IPv4-mapped
      "::127.0.0.1", // IPv4-compatible
      "2002:a9fe:a9fe::1", // 6to4 of the metadata address
      "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
      "2001:db8::1", "192.0.2.10", "198.51.100.7", "203.0.113.9", // documentation
      "100.64.0.1", "198.18.0.1", "255.255.255.255", "0.0.0.0", "fd00:ec2::254", "fe80::1%eth0", "::",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
  });

  it("lets public unicast through, wrapped or not", () => {
    for (const address of ["8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34", "64:ff9b::808:808", "2002:808:808::1"]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });
});
