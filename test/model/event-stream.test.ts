/**
 * The reader of streamed completions (src/model/event-stream.ts): whatever way a server cuts its
 * bytes and ends its lines, the events come out whole and in order, and errors in the stream are
 * the errors the openai package gives for them.
 */
import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { readEventStream } from "../../src/model/event-stream.ts";

/** A response whose body arrives in the given pieces, one read each. */
function responseOf(pieces: Array<string | Uint8Array>, options: { endless?: boolean } = {}): Response {
  const encoder = new TextEncoder();
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < pieces.length) {
        const piece = pieces[at++];
        controller.enqueue(typeof piece === "string" ? encoder.encode(piece) : piece);
      } else if (!options.endless) controller.close();
      else return new Promise<void>(() => undefined);
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "x-request-id": "req_1" } });
}

async function read(pieces: Array<string | Uint8Array>): Promise<{ data: unknown[]; end: string }> {
  const data: unknown[] = [];
  const end = await readEventStream(responseOf(pieces), (d) => data.push(d));
  return { data, end };
}

/** Every way of cutting `bytes` in two, plus one byte a read. */
function cuts(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [[...bytes].map((b) => Uint8Array.of(b))];
  for (let i = 1; i < bytes.length; i++) out.push([bytes.slice(0, i), bytes.slice(i)]);
  return out;
}

const EVENTS = [{ choices: [{ delta: { content: "Grüße 🎉" } }] }, { choices: [{ delta: {}, finish_reason: "stop" }] }];

describe("reading a streamed completion", () => {
  for (const [name, eol] of [["LF", "\n"], ["CRLF", "\r\n"], ["CR", "\r"]] as const) {
    it(`gives every event whole with ${name} line ends, however the bytes are cut`, async () => {
      const text = `: keep-alive${eol}${EVENTS.map((e) => `data: ${JSON.stringify(e)}${eol}${eol}`).join("")}data: [DONE]${eol}${eol}`;
      for (const pieces of cuts(new TextEncoder().encode(text))) {
        const { data, end } = await read(pieces);
        expect(data).toEqual(EVENTS);
        expect(end).toBe("done");
      }
    });
  }

  it("joins the data lines of one event, skips other fields, and takes 'data:' without a space", async () => {
    const { data } = await read(['id: 7\nevent: message\ndata: {"a":\ndata:1}\nretry: 5\n\n', "data:[DONE]\n\n"]);
    expect(data).toEqual([{ a: 1 }]);
    // A CRLF cut between its CR and LF is one line end, not a blank line that would end the event early.
    for (const pieces of cuts(new TextEncoder().encode('data: {"a":\r\ndata: [1,\r\ndata: 2]}\r\n\r\n'))) {
      expect((await read(pieces)).data).toEqual([{ a: [1, 2] }]);
    }
  });

  it("counts the last event when the body ends without its blank line, and says [DONE] never came", async () => {
    expect(await read(['data: {"n":1}\n\ndata: {"n":2}'])).toEqual({ data: [{ n: 1 }, { n: 2 }], end: "ended" });
    expect(await read(['data: {"n":1}\n\n'])).toEqual({ data: [{ n: 1 }], end: "ended" });
    expect(await read(["data: [DONE]"])).toEqual({ data: [], end: "done" });
  });

  it("stops at [DONE]: nothing after it is read as an event, and a body left open does not hold the answer", async () => {
    const data: unknown[] = [];
    const response = responseOf(['data: {"n":1}\n\ndata: [DONE]\n\n', 'data: {"n":2}\n\n'], { endless: true });
    expect(await readEventStream(response, (d) => data.push(d))).toBe("done");
    expect(data).toEqual([{ n: 1 }]);
  });

  it("turns an error event, or a payload with an error, into an APIError with the server's message", async () => {
    const payload = read(['data: {"choices":[]}\n\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\n']);
    await expect(payload).rejects.toBeInstanceOf(APIError);
    await expect(payload).rejects.toThrow("overloaded");
    const named = read(['event: error\ndata: {"message":"quota gone"}\n\n']);
    await expect(named).rejects.toBeInstanceOf(APIError);
    await expect(named).rejects.toThrow("quota gone");
  });

  it("calls a payload that is not JSON a malformed event", async () => {
    await expect(read(["data: {not json\n\n"])).rejects.toThrow(SyntaxError);
  });

  it("ends when its signal is aborted while a read waits", async () => {
    const controller = new AbortController();
    const data: unknown[] = [];
    const reading = readEventStream(responseOf(['data: {"n":1}\n\n'], { endless: true }), (d) => data.push(d), controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect(await reading).toBe("ended");
    expect(data).toEqual([{ n: 1 }]);
  });
});
