/**
 * The model endpoint check at start is one HTTP call (`GET <baseURL>/models`): nock answers it, so
 * each answer a real provider gives can be tried without a server.
 */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkModelEndpoint } from "../../src/model/endpoint-check.ts";

const ORIGIN = "https://models.example.test";
const BASE = `${ORIGIN}/v1`;

beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe("the model endpoint check (one GET /models)", () => {
  it("sends the API key as a bearer token and passes on 200", async () => {
    const scope = nock(ORIGIN).get("/v1/models").matchHeader("authorization", "Bearer sk-test-key-0123456789").reply(200, { data: [] });
    expect(await checkModelEndpoint(BASE, "sk-test-key-0123456789")).toEqual({ ok: true });
    expect(scope.isDone()).toBe(true);
  });

  it("sends no authorization header without a key (a local server)", async () => {
    nock(ORIGIN, { badheaders: ["authorization"] }).get("/v1/models").reply(200, { data: [] });
    expect(await checkModelEndpoint(`${BASE}/`, undefined)).toEqual({ ok: true });
  });

  it("stops the start on 401, naming OPENAI_API_KEY and never the key", async () => {
    nock(ORIGIN).get("/v1/models").reply(401, { error: { message: "Incorrect API key provided: sk-wrong" } });
    const result = await checkModelEndpoint(BASE, "sk-wrong-key-0123456789");
    expect(result).toMatchObject({ ok: false, fatal: true, message: expect.stringContaining("OPENAI_API_KEY") });
    expect(JSON.stringify(result)).not.toContain("sk-wrong-key");
  });

  it("only reports a 403 (a key that may not list models can still chat)", async () => {
    nock(ORIGIN).get("/v1/models").reply(403, {});
    expect(await checkModelEndpoint(BASE, "sk-limited-key-0123456789")).toMatchObject({ ok: false, fatal: false, message: expect.stringContaining("HTTP 403") });
  });

  it("only reports a server that has no /models route", async () => {
    nock(ORIGIN).get("/v1/models").reply(404, "not found");
    expect(await checkModelEndpoint(BASE, undefined)).toMatchObject({ ok: false, fatal: false, message: expect.stringContaining("HTTP 404") });
  });

  it("only reports an endpoint the network cannot reach (the server may still be starting)", async () => {
    nock(ORIGIN).get("/v1/models").replyWithError({ code: "ECONNREFUSED", message: "connect ECONNREFUSED" });
    expect(await checkModelEndpoint(BASE, undefined)).toMatchObject({ ok: false, fatal: false, message: expect.stringContaining("not reachable yet") });
  });

  it("passes through a base URL with a proxy's user and password (as the model client does), never showing the password", async () => {
    const scope = nock(ORIGIN).get("/v1/models").basicAuth({ user: "proxyuser", pass: "Pr0xyPass99" }).reply(200, { data: [] });
    expect(await checkModelEndpoint("https://proxyuser:Pr0xyPass99@models.example.test/v1", undefined)).toEqual({ ok: true });
    expect(scope.isDone()).toBe(true);
    nock(ORIGIN).get("/v1/models").replyWithError({ code: "ECONNRESET", message: "socket hang up at https://proxyuser:Pr0xyPass99@models.example.test/v1/models" });
    const failed = await checkModelEndpoint("https://proxyuser:Pr0xyPass99@models.example.test/v1", undefined);
    expect(failed).toMatchObject({ ok: false, fatal: false });
    expect(JSON.stringify(failed)).not.toContain("Pr0xyPass99");
  });
});
