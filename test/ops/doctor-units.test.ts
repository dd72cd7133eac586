import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.ts";
import { closestKey, levenshtein, schemaKeyPaths } from "../../src/cli/closest-key.ts";
import { checkEnvironment } from "../../src/cli/config-checks.ts";

const paths = schemaKeyPaths(ConfigSchema);

describe("closest valid config key", () => {
  it("suggests the sibling key a typo was meant to be", () => {
    expect(closestKey(["slack", "botTokn"], paths)).toBe("slack.botToken");
    expect(closestKey(["approval", "timeoutMS"], paths)).toBe("approval.timeoutMs");
  });

  it("keeps the person's own record keys in the suggestion", () => {
    expect(closestKey(["tools", "bySender", "slack:U1", "profil"], paths)).toBe("tools.bySender.slack:U1.profile");
  });

  it("finds a key written at the wrong level", () => {
    expect(closestKey(["signingSecret"], paths)).toBe("slack.signingSecret");
  });

  it("suggests nothing for a key unlike any other", () => {
    expect(closestKey(["zzzzzzzz"], paths)).toBeUndefined();
  });

  it("counts edits", () => {
    expect(levenshtein("kitten", "sitting")).toBe(3);
    expect(levenshtein("Model", "modle")).toBe(2);
  });
});

describe("environment checks", () => {
  it("calls a Node older than 22.18 fatal and a newer one fine", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gh-env-"));
    try {
      expect(checkEnvironment(dir, "22.11.0")[0]).toMatchObject({ severity: "fatal", topic: "node" });
      expect(checkEnvironment(dir, "20.19.1")[0]!.message).toContain("too old");
      expect(checkEnvironment(dir, "22.18.0")[0]).toMatchObject({ severity: "ok" });
      expect(checkEnvironment(dir, "24.1.0")[1]).toMatchObject({ severity: "ok", topic: "data folder" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
