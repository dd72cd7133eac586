/**
 * The console channel: the bot in a terminal. Each line typed is a message; progress lines and
 * answers are printed; approvals are asked right at the prompt (yes / no / always). Used when
 * no platform token is configured, or when chosen explicitly.
 *
 * At a terminal, lines are sent as they are typed (so /stop reaches a running task). From a
 * pipe or file, each line waits until the previous one is answered, so a scripted session reads
 * like a typed one: an answer line after a request that needs approval answers the approval. A
 * command (/stop, /status, …) typed at an open question is a command, not an answer.
 *
 * Everything printed passes terminalSafe: no escape sequence from a model or a tool reaches the terminal.
 */
import { createInterface, type Interface } from "node:readline";
import { userInfo } from "node:os";
import type { Readable, Writable } from "node:stream";
import { parseBotCommand, parseEnvelope, type ChannelCapabilities, type ReplyTarget } from "../../src/envelope.ts";
import type { ChannelAdapter, InboundSink, OutboundPort, PromptOptions, SentMessage } from "../../src/ports.ts";
import { terminalSafe } from "./terminal-text.ts";

export interface ConsoleAdapterOptions {
  input?: Readable;
  output?: Writable;
  user?: { id: string; name?: string };
  /** Called when the input has ended and every line read was answered. */
  onInputEnd?: () => void;
  /** Send lines as they come (a terminal) or one answered line at a time (a pipe). Default: from input.isTTY. */
  interactive?: boolean;
}

const CAPABILITIES: ChannelCapabilities = {
  threads: false,
  inlineApproval: false,
  edit: false,
  typing: false,
  maxMessageChars: 100_000,
  maxButtonPayloadBytes: 64,
};

export interface ConsoleAdapter extends ChannelAdapter {
  prompt(question: string, signal: AbortSignal, options?: PromptOptions): Promise<string>;
  notice(text: string): void;
}

/** Creates the console adapter. */
export function createConsoleAdapter(options: ConsoleAdapterOptions = {}): ConsoleAdapter {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const user = options.user ?? { id: "local", name: safeUserName() };
  const interactive = options.interactive ?? Boolean((input as { isTTY?: boolean }).isTTY);
  const target: ReplyTarget = { channel: "console", conversationId: "terminal" };
  let rl: Interface | undefined;
  let sink: InboundSink | undefined;
  let counter = 0;
  let sent = 0;
  let awaitingReply = 0;
  let inputEnded = false;
  let stopping = false;
  const backlog: string[] = [];
  const questions: Array<{ question: string; keep: boolean; resolve: (answer: string) => void }> = [];
  /** A command was typed at an open question: the question is shown again after the command's reply. */
  let askAgain = false;

  const write = (raw: string) => {
    const text = terminalSafe(raw);
    output.write(text.endsWith("\n") ? text : `${text}\n`);
  };
  const showPrompt = () => {
    if (interactive && questions.length === 0) rl?.prompt(true);
  };

  const submit = (text: string) => {
    awaitingReply++;
    const env = parseEnvelope({
      id: `console:${process.pid}:${++counter}:${Date.now()}`,
      channel: "console",
      conversation: { id: "terminal", kind: "dm" },
      sender: { id: user.id, name: user.name, isBot: false },
      mentioned: true,
      text,
      replyTo: target,
      receivedAt: Date.now(),
      capabilities: CAPABILITIES,
    });
    void sink!.message(env);
  };

  /** Feeds waiting lines: answers first, then the next message once the previous one is answered. */
  const pump = () => {
    while (backlog.length) {
      if (questions.length) {
        // From a pipe, the line after a command waits for the command's reply, as every line does.
        if (!interactive && askAgain) return;
        const answer = backlog.shift()!;
        if (!interactive) write(answer);
        // A command at an open question is a command (/stop ends the task that asks), not an answer.
        if (parseBotCommand(answer)) {
          askAgain = true;
          submit(answer.trim());
          continue;
        }
        questions.shift()!.resolve(answer);
        continue;
      }
      if (!interactive && awaitingReply > 0) return;
      const text = backlog.shift()!.trim();
      if (!text) continue;
      if (!interactive) write(`you › ${text}`);
      submit(text);
    }
    // At a terminal, Ctrl-D ends the session at once (the bot finishes what runs); from a pipe, once all is answered.
    if (inputEnded && (interactive || (awaitingReply === 0 && questions.length === 0))) {
      inputEnded = false;
      options.onInputEnd?.();
    }
  };

  const port: OutboundPort = {
    async send(_target, message): Promise<SentMessage> {
      if (message.kind === "progress") write(`  ${message.text.replace(/\n/g, "\n  ")}`);
      else write(`\ngatehouse › ${message.text}\n`);
      // A terminal has nothing to click: the buttons are shown as what they would do.
      if (message.buttons?.length) write(`  (buttons, not clickable here: ${message.buttons.map((b) => `[${b.label}]`).join(" ")})\n`);
      if (message.kind !== "progress" && message.kind !== "notice" && awaitingReply > 0) awaitingReply--;
      if (askAgain && message.kind !== "progress") {
        askAgain = false;
        if (questions.length) output.write(`\n${terminalSafe(questions[0]!.question)}`);
      }
      showPrompt();
      setImmediate(pump);
      return { id: String(++sent) };
    },
  };

  return {
    channel: "console",
    capabilities: CAPABILITIES,
    port,
    pacing: { minIntervalMs: 0 },
    prompt(question, signal, promptOptions = {}) {
      return new Promise<string>((resolve, reject) => {
        if (signal.aborted) return reject(new Error("aborted"));
        const keep = promptOptions.keep === true;
        // The input has ended: nobody can answer here any more (a kept question waits for the next start).
        if (inputEnded && !keep) return resolve("");
        const entry = {
          question,
          keep,
          resolve: (answer: string) => {
            signal.removeEventListener("abort", onAbort);
            resolve(answer);
          },
        };
        const onAbort = () => {
          const i = questions.indexOf(entry);
          if (i >= 0) questions.splice(i, 1);
          write("\n(no answer; not run)");
          reject(new Error("aborted"));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        questions.push(entry);
        output.write(`\n${terminalSafe(question)}`);
        setImmediate(pump);
      });
    },
    notice(text) {
      write(text);
      showPrompt();
    },
    async start(s: InboundSink) {
      sink = s;
      rl = createInterface({ input, output: interactive ? output : undefined, terminal: interactive, prompt: "you › " });
      write(`Gatehouse console. Type a message; /help lists the commands. Ctrl-D quits.`);
      showPrompt();
      rl.on("line", (line) => {
        backlog.push(line);
        pump();
      });
      rl.on("close", () => {
        inputEnded = true;
        // The bot stops, or the person quit at the terminal: an approval question stays open in the
        // store and is asked again at the next start, until it expires. At the end of piped input,
        // and for other questions, no one is left to answer: an empty answer (for an approval, "no").
        const leaveOpen = (q: (typeof questions)[number]) => q.keep && (stopping || interactive);
        const open = questions.splice(0);
        for (const q of open) if (!leaveOpen(q)) q.resolve("");
        if (!stopping && open.some(leaveOpen)) write("\n(the approval question stays open: it is asked again at the next start)");
        pump();
      });
    },
    async stop() {
      stopping = true;
      rl?.close();
    },
  };
}

function safeUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
