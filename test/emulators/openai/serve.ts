/**
 * Runs the OpenAI-compatible emulator with the demo model, to try `npm start` without a real
 * model:  node test/emulators/openai/serve.ts [port]   (default 8787), then
 * OPENAI_BASE_URL=http://127.0.0.1:<port>/v1 npm start
 */
import { startOpenAIEmulator } from "./emulator.ts";
import { demoModel } from "./demo-model.ts";

const port = Number(process.argv[2] ?? process.env.PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`not a port: ${process.argv[2]}\nusage: node test/emulators/openai/serve.ts [port]\n`);
  process.exit(2);
}

const emulator = await startOpenAIEmulator({ port });
emulator.setFallback(demoModel);
process.stdout.write(`OpenAI-compatible emulator listening; use OPENAI_BASE_URL=${emulator.baseURL}\n`);

const stop = () => void emulator.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
