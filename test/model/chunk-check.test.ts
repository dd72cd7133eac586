/**
 * Streamed chunks of the usual shape skip the zod parse (src/model/wire.ts, parseChunk): what the
 * assembler makes of them must be exactly what it makes of the schema's output, and a chunk the
 * schema refuses must still be refused.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StreamAssembler } from "../../src/model/stream-assembler.ts";
import { completionChunkSchema, parseChunk } from "../../src/model/wire.ts";

const call = (delta: object) => ({ choices: [{ index: 0, delta: { tool_calls: [delta] }, logprobs: null, finish_reason: null }] });

/** Replies as chunk lists: the usual shapes, and the lenient ones only the schema reads. */
const REPLIES: object[][] = [
  [
    { id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "", refusal: null }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { content: "It is " } }] },
    { choices: [{ index: 0, delta: { content: "noon.", reasoning_content: "think" } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { total_tokens: 3 } },
  ],
  [
    call({ index: 0, id: "call_1", type: "function", function: { name: "current_time", arguments: "" } }),
    call({ index: 0, function: { arguments: '{"timezone":' } }),
    call({ index: 0, function: { arguments: '"UTC"}' }, extra_content: { google: { thought_signature: "sig" } } }),
    call({ id: "call_2", function: { name: "shell", arguments: { cmd: "ls" } } }),
    call({ index: null, id: null, function: { name: null, arguments: null } }),
    { choices: [{ delta: null, finish_reason: "tool_calls" }] },
    { choices: [] },
  ],
];

const BAD: unknown[] = [
  null, "text", [], {}, { choices: "no" }, { choices: [null] }, { choices: [{ delta: { content: 5 } }] },
  { choices: [{ finish_reason: 1 }] }, { choices: [{ delta: { tool_calls: {} } }] },
  call({ index: -1 }), call({ index: 1.5 }), call({ id: 3 }), call({ function: { name: 7 } }), call({ function: "f" }),
];

function assemble(chunks: object[], parse: (raw: unknown) => ReturnType<typeof parseChunk>) {
  const assembler = new StreamAssembler();
  const texts = chunks.map((c) => assembler.push(parse(structuredClone(c))));
  return { texts, result: assembler.result() };
}

describe("checking streamed chunks", () => {
  it("assembles every reply exactly as the schema's output does", () => {
    for (const chunks of REPLIES) expect(assemble(chunks, parseChunk)).toEqual(assemble(chunks, (raw) => completionChunkSchema.parse(raw)));
  });

  it("refuses what the schema refuses, with the schema's error", () => {
    for (const raw of BAD) expect(() => parseChunk(raw), JSON.stringify(raw)).toThrow(z.ZodError);
  });
});
