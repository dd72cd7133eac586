import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

function files(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    return statSync(path.join(root, rel)).isDirectory() ? files(rel) : rel.endsWith(".ts") ? [rel] : [];
  });
}

/** Static, side-effect and dynamic imports of a file. */
const imports = (file: string) =>
  [...readFileSync(path.join(root, file), "utf8").matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)["']([^"']+)["']/gm)].map((m) => m[1]!);

/** The public surface of src that adapters may use. */
const PUBLIC = [
  "src/envelope.ts", "src/ports.ts", "src/approval/card.ts", "src/approval/summary.ts", "src/observe/logger.ts", "src/observe/scrub.ts", "src/lru-map.ts",
];

describe("the layout's dependency rules", () => {
  it("keeps src free of adapter imports, except the composition root", () => {
    const offenders = files("src").filter((f) => f !== "src/main.ts" && imports(f).some((i) => i.includes("adapters/")));
    expect(offenders).toEqual([]);
  });

  it("lets adapters import only the public surface of src", () => {
    const offenders = files("adapters").flatMap((f) =>
      imports(f)
        .filter((i) => i.startsWith("."))
        .map((i) => path.relative(root, path.resolve(root, path.dirname(f), i)))
        .filter((target) => target.startsWith("src/") && !PUBLIC.includes(target))
        .map((target) => `${f} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it("keeps platform names out of the engine", () => {
    const offenders = files("src/engine").filter((f) => /slack|discord|telegram/i.test(readFileSync(path.join(root, f), "utf8")));
    expect(offenders).toEqual([]);
  });
});
