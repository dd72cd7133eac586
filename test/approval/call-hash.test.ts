/**
 * The call hash (src/approval/summary.ts) names a call's exact arguments in stored approvals, parked
 * turns and always-rules: it must stay the same text for the same call, however it is computed.
 */
import { describe, expect, it } from "vitest";
import { hashCall, hashCanonicalCall } from "../../src/approval/summary.ts";
import { canonicalJson } from "../../src/observe/canonical-json.ts";

describe("the call hash", () => {
  it("is the sha256 of the canonical tool and arguments, whatever order the keys came in", () => {
    // Computed once from {"args":{"a":[1,{"y":2,"z":"é"}],"b":"x"},"tool":"shell"}; records saved earlier hold it.
    const stored = "5479ce76932c5dd2065ec59c9032255396376dea52c42fd9fc2dde29d96a7eb5";
    const args = { b: "x", a: [1, { z: "é", y: 2 }] };
    expect(hashCall("shell", args)).toBe(stored);
    expect(hashCanonicalCall("shell", canonicalJson(args))).toBe(stored);
    expect(hashCanonicalCall("shell", canonicalJson({ ...args, b: "y" }))).not.toBe(stored);
    expect(hashCanonicalCall("shell2", canonicalJson(args))).not.toBe(stored);
  });
});
