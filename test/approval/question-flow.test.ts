/**
 * The field-by-field question flow over a scripted QuestionPrompt (a channel whose person clicks and
 * types from a script): what each step shows, how clicks and replies are read, and how a question ends.
 */
import { describe, expect, it } from "vitest";
import { fieldByFieldQuestioner, type PromptReply, type PromptStep } from "../../src/approval/question-flow.ts";
import { questionKind, type Question, type QuestionAudience, type QuestionField } from "../../src/approval/questions.ts";

const AUDIENCE: QuestionAudience = {
  target: { channel: "chat", conversationId: "c1" }, requester: { id: "U1", name: "Ann", isBot: false }, answerers: ["U1"],
  traceId: "t1", sessionKey: "chat:c1",
};
const ANN = { id: "U1", name: "Ann" };

/** A prompt answering each step from `replies` (a string is a typed reply, `{ button }` a click). */
function scripted(replies: Array<string | { button: string } | PromptReply>) {
  const steps: PromptStep[] = [];
  const prompt = {
    async show(step: PromptStep): Promise<PromptReply> {
      steps.push(step);
      const next = replies.shift();
      if (next === undefined) return { kind: "timeout" };
      if (typeof next === "string") return { kind: "reply", text: next, by: ANN };
      if ("button" in next) return { kind: "button", id: next.button, by: ANN };
      return next;
    },
  };
  return { steps, questioner: fieldByFieldQuestioner(prompt) };
}

function question(fields: QuestionField[]): Question {
  return { kind: questionKind(fields), from: 'MCP server "crm"', title: "Who is the customer?", fields };
}

const ask = (q: Question, questioner: ReturnType<typeof scripted>["questioner"]) =>
  questioner.ask(q, { signal: new AbortController().signal, timeoutMs: 60_000, audience: AUDIENCE });

const NAME: QuestionField = { type: "text", name: "name", label: "Name", required: true };
const SIZE: QuestionField = { type: "number", name: "seats", label: "Seats", required: false, integer: true, minimum: 1, maximum: 50 };
const PLAN: QuestionField = {
  type: "choice", name: "plan", label: "Plan", required: true,
  options: [{ value: "free", label: "Free" }, { value: "pro", label: "Pro" }],
};
const TRIAL: QuestionField = { type: "boolean", name: "trial", label: "Start a trial?", required: false, default: true };

describe("asking a question field by field", () => {
  it("asks each field in turn, then shows the answers for review before sending them", async () => {
    const { steps, questioner } = scripted(["Acme Ltd", "12", { button: "opt:1" }, "", { button: "send" }]);
    const answer = await ask(question([NAME, SIZE, PLAN, TRIAL]), questioner);
    expect(answer).toEqual({ action: "accept", values: { name: "Acme Ltd", seats: 12, plan: "pro", trial: true }, by: ANN });
    expect(steps[0]!.text).toContain('❓ MCP server "crm" asks: Who is the customer?');
    expect(steps[0]!.text).toContain("never give passwords or keys here");
    expect(steps[2]!.buttons.map((b) => b.label)).toEqual(["Free", "Pro", "Decline"]);
    expect(steps[4]!.text).toBe('Send these answers to MCP server "crm"?\n- Name: Acme Ltd\n- Seats: 12\n- Plan: Pro\n- Start a trial?: yes');
  });

  it("asks a wrong answer again, saying what is wrong", async () => {
    const { steps, questioner } = scripted(["99", "seven", "7"]);
    const answer = await ask(question([SIZE]), questioner);
    expect(answer).toMatchObject({ action: "accept", values: { seats: 7 } });
    expect(steps[1]!.text).toMatch(/^⚠️ the most allowed is 50\. Try again\./);
    expect(steps[2]!.text).toMatch(/^⚠️ "seven" is not a number\. Try again\./);
  });

  it("reads a reply that names a button as its click", async () => {
    const { questioner } = scripted(["pro"]);
    expect(await ask(question([PLAN]), questioner)).toMatchObject({ action: "accept", values: { plan: "pro" } });
  });

  it("leaves out an optional field that is skipped", async () => {
    const { questioner } = scripted([{ button: "skip" }]);
    expect(await ask(question([SIZE]), questioner)).toMatchObject({ action: "accept", values: {} });
  });

  it("declines at once when the person declines", async () => {
    const { steps, questioner } = scripted(["Acme", { button: "decline" }]);
    expect(await ask(question([NAME, PLAN]), questioner)).toEqual({ action: "decline", by: ANN, reason: "the person declined" });
    expect(steps).toHaveLength(2);
  });

  it("cancels when no answer comes in time, or the request is stopped", async () => {
    expect(await ask(question([NAME]), scripted([]).questioner)).toEqual({ action: "cancel", reason: "no answer in time" });
    expect(await ask(question([NAME]), scripted([{ kind: "cancelled" }]).questioner)).toEqual({ action: "cancel", reason: "the request was stopped" });
  });

  it("gives up after three wrong answers to one field", async () => {
    const { questioner } = scripted(["", "", ""]);
    expect(await ask(question([NAME]), questioner)).toEqual({ action: "cancel", reason: 'no valid answer to "Name" after 3 tries' });
  });

  it("does not send a form the person does not confirm", async () => {
    const { questioner } = scripted(["Acme", "free", "no thanks"]);
    expect(await ask(question([NAME, PLAN]), questioner)).toMatchObject({ action: "decline" });
  });
});
