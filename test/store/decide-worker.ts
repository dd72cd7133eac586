/**
 * A second "process" for the compare-and-set test: opens the store on its own connection,
 * waits at a shared barrier so both workers start together, then clicks every approval.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";

const { dataDir, ids, who, barrier } = workerData as { dataDir: string; ids: string[]; who: string; barrier: SharedArrayBuffer };
const store = await openSqliteStore({ dataDir });
const gate = new Int32Array(barrier);
Atomics.add(gate, 0, 1);
Atomics.notify(gate, 0);
while (Atomics.load(gate, 0) < 2) Atomics.wait(gate, 0, 1, 1_000);
const won: string[] = [];
for (const id of ids) {
  if (await store.decideApproval(id, "approved", { id: who }, 2_000)) won.push(id);
}
await store.close();
parentPort!.postMessage(won);
