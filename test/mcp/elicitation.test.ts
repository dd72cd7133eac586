/**
 * How an elicitation request's schema becomes a question, and how an answer goes back to the server.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/observe/logger.ts";
import { answerElicitation, questionOf, resultOf } from "../../src/tools/mcp/elicitation.ts";
import type { Question } from "../../src/approval/questions.ts";

describe("an elicitation request as a question", () => {
  it("maps each kind of property to a field", () => {
    const made = questionOf("crm", {
      message: "About the customer",
      requestedSchema: {
        properties: {
          email: { type: "string", format: "email", title: "Email" },
          seats: { type: "integer", minimum: 1, maximum: 50, default: 5 },
          tier: { type: "string", enum: ["t1", "t2"], enumNames: ["Basic", "Gold"] },
          region: { type: "string", oneOf: [{ const: "eu", title: "Europe" }, { const: "us", title: "America" }], default: "eu" },
          tags: { type: "array", items: { anyOf: [{ const: "a", title: "Alpha" }, { const: "b", title: "Beta" }] }, maxItems: 1 },
          vip: { type: "boolean", description: "Is this a VIP?" },
        },
        required: ["email"],
      },
    });
    expect("question" in made && made.question).toEqual({
      kind: "form", from: 'MCP server "crm"', title: "About the customer",
      fields: [
        { type: "text", name: "email", label: "Email", required: true, format: "email" },
        { type: "number", name: "seats", label: "seats", required: false, integer: true, minimum: 1, maximum: 50, default: 5 },
        { type: "choice", name: "tier", label: "tier", required: false, options: [{ value: "t1", label: "Basic" }, { value: "t2", label: "Gold" }] },
        { type: "choice", name: "region", label: "region", required: false, default: "eu", options: [{ value: "eu", label: "Europe" }, { value: "us", label: "America" }] },
        { type: "choices", name: "tags", label: "tags", required: false, maxItems: 1, options: [{ value: "a", label: "Alpha" }, { value: "b", label: "Beta" }] },
        { type: "boolean", name: "vip", label: "vip", description: "Is this a VIP?", required: false },
      ].map((f) => expect.objectContaining(f)),
    });
  });

  it("declines a request whose required field cannot be shown, without asking", async () => {
    let asked = false;
    const result = await answerElicitation(
      "crm",
      { message: "Upload", requestedSchema: { properties: { file: { type: "object" } }, required: ["file"] } },
      async () => {
        asked = true;
        return { action: "cancel", reason: "unexpected" };
      },
      silentLogger(),
    );
    expect(result).toEqual({ action: "decline" });
    expect(asked).toBe(false);
  });

  it("cancels rather than send a value that does not fit the schema", () => {
    const made = questionOf("crm", { message: "Seats?", requestedSchema: { properties: { seats: { type: "integer", maximum: 5 } }, required: ["seats"] } });
    const question = (made as { question: Question }).question;
    expect(resultOf(question, { action: "accept", values: { seats: 9 }, by: { id: "U1" } }, silentLogger())).toEqual({ action: "cancel" });
    expect(resultOf(question, { action: "accept", values: { seats: 3 }, by: { id: "U1" } }, silentLogger())).toEqual({ action: "accept", content: { seats: 3 } });
  });
});
