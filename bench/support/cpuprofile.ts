/**
 * Reading a V8 .cpuprofile (as `node --cpu-prof` or the inspector's Profiler writes it): self time
 * per function, per file and per package (a node_modules package, a folder of this repository, or
 * Node's internals), and inclusive time per function (time with that function anywhere on the stack).
 * Run directly: `node bench/support/cpuprofile.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { renderTable } from "./stats.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const repoRoot = path.resolve(import.meta.dirname, "../..");

function fileOf(url: string): string {
  if (!url) return "";
  let p = url.startsWith("file://") ? decodeURIComponent(url.slice(7)) : url;
  if (p.startsWith(repoRoot + "/")) p = p.slice(repoRoot.length + 1);
  return p;
}

/** The package a file belongs to: `pino`, `@slack/bolt`, `src/observe`, `adapters/telegram`, `node:internal`, … */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const file = fileOf(url);
  const nm = file.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = file.slice(nm + 13).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (file.startsWith("node:")) return file.startsWith("node:internal") ? "node:internal" : file;
  const parts = file.split("/");
  if (parts[0] === "src" || parts[0] === "adapters" || parts[0] === "bench" || parts[0] === "test") return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
  return file;
}

export interface ProfileSummary {
  totalMs: number;
  byFunction: Array<{ key: string; file: string; pkg: string; selfMs: number }>;
  byFile: Array<{ key: string; selfMs: number }>;
  byPackage: Array<{ key: string; selfMs: number }>;
  inclusive: Array<{ key: string; ms: number }>;
}

export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + dt);
  }
  const fnKey = (n: ProfileNode) => {
    const f = n.callFrame;
    const file = fileOf(f.url);
    return `${f.functionName || "(anonymous)"} ${file ? `${file}:${f.lineNumber + 1}` : ""}`.trim();
  };
  const fn = new Map<string, { file: string; pkg: string; selfMs: number }>();
  const file = new Map<string, number>();
  const pkg = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const n = byId.get(id)!;
    total += ms;
    const k = fnKey(n);
    const f = fileOf(n.callFrame.url) || n.callFrame.functionName;
    const p = packageOf(n.callFrame.url, n.callFrame.functionName);
    const e = fn.get(k) ?? { file: f, pkg: p, selfMs: 0 };
    e.selfMs += ms;
    fn.set(k, e);
    file.set(f, (file.get(f) ?? 0) + ms);
    pkg.set(p, (pkg.get(p) ?? 0) + ms);
    // Inclusive: every distinct function on this sample's stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const key = fnKey(byId.get(cur)!);
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + ms);
    }
  }
  const sorted = <T extends { selfMs: number }>(xs: T[]) => xs.sort((a, b) => b.selfMs - a.selfMs);
  return {
    totalMs: total,
    byFunction: sorted([...fn].map(([key, v]) => ({ key, ...v }))),
    byFile: sorted([...file].map(([key, selfMs]) => ({ key, selfMs }))),
    byPackage: sorted([...pkg].map(([key, selfMs]) => ({ key, selfMs }))),
    inclusive: [...incl].map(([key, ms]) => ({ key, ms })).sort((a, b) => b.ms - a.ms),
  };
}

/**
 * Inclusive time of named groups: a sample counts for a group when any frame on its stack matches
 * the group's pattern (tested against "<function> <file>:<line>"). Groups may overlap.
 */
export function groupTimes(profile: CpuProfile, groups: Record<string, RegExp>): Array<{ key: string; ms: number }> {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const label = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"} ${fileOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  const totals = new Map<string, number>(Object.keys(groups).map((k) => [k, 0]));
  const cache = new Map<number, string[]>();
  const matchesOf = (id: number): string[] => {
    const hit = cache.get(id);
    if (hit) return hit;
    const node = byId.get(id)!;
    const own = Object.entries(groups).filter(([, re]) => re.test(label(node))).map(([k]) => k);
    const up = parent.has(id) ? matchesOf(parent.get(id)!) : [];
    const all = [...new Set([...own, ...up])];
    cache.set(id, all);
    return all;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    for (const k of matchesOf(profile.samples[i]!)) totals.set(k, totals.get(k)! + dt);
  }
  return [...totals].map(([key, ms]) => ({ key, ms }));
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
}

/** Tables of the summary; `perMessage` divides ms by that many messages as a second column. */
export function renderSummary(s: ProfileSummary, options: { top?: number; perMessage?: number; inclusiveFilter?: (key: string) => boolean } = {}): string {
  const top = options.top ?? 40;
  const busy = s.totalMs - (s.byPackage.find((p) => p.key === "(idle)")?.selfMs ?? 0);
  const row = (key: string, ms: number, extra: string[] = []) => [
    ...extra, key.length > 110 ? `${key.slice(0, 107)}...` : key, ms.toFixed(1),
    options.perMessage ? (ms / options.perMessage).toFixed(3) : "", `${((100 * ms) / busy).toFixed(1)}%`,
  ];
  const head = (what: string) => [what, "self ms", options.perMessage ? "ms/msg" : "", "% busy"];
  const parts = [
    `profile: ${s.totalMs.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms busy (not idle)`,
    "",
    `by package / folder (self time)`,
    renderTable(head("package"), s.byPackage.slice(0, top).map((p) => row(p.key, p.selfMs))),
    "",
    `by file (self time), top ${top}`,
    renderTable(head("file"), s.byFile.slice(0, top).map((p) => row(p.key, p.selfMs))),
    "",
    `by function (self time), top ${top}`,
    renderTable(["package", ...head("function")], s.byFunction.slice(0, top).map((p) => row(p.key, p.selfMs, [p.pkg]))),
  ];
  if (options.inclusiveFilter) {
    const rows = s.inclusive.filter((i) => options.inclusiveFilter!(i.key)).slice(0, top);
    parts.push("", `inclusive time (function anywhere on the stack), top ${top}`, renderTable(head("function"), rows.map((p) => row(p.key, p.ms))));
  }
  return parts.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node bench/support/cpuprofile.ts <file.cpuprofile> [top] [messages]\n");
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 40);
  const messages = Number(process.argv[4] ?? 0) || undefined;
  process.stdout.write(`${renderSummary(summarizeProfile(readProfile(file)), { top, perMessage: messages, inclusiveFilter: (k) => !k.startsWith("(") })}\n`);
}
