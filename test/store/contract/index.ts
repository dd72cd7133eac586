/**
 * The store contract: the behaviours every Store must have, run against each implementation
 * (test/store/sqlite-contract.test.ts, test/store/postgres-contract.test.ts). A behaviour that
 * only one kind of store has is tested beside that store instead.
 */
import { describe } from "vitest";
import { describeAlwaysContract } from "./always.ts";
import { describeApprovalsContract } from "./approvals.ts";
import { describeAuditChainContract } from "./audit-chain.ts";
import { describeDedupeContract } from "./dedupe.ts";
import type { StoreHarness } from "./harness.ts";
import { describeHistoryContract } from "./history.ts";
import { describeRecordsContract } from "./records.ts";

export type { OpenOptions, StoreHarness } from "./harness.ts";
export { pending } from "./approvals.ts";

/** Declares the whole contract suite for one kind of store. */
export function describeStoreContract(name: string, harness: StoreHarness): void {
  describe(`${name} store contract`, () => {
    describeHistoryContract(harness);
    describeApprovalsContract(harness);
    describeAlwaysContract(harness);
    describeDedupeContract(harness);
    describeRecordsContract(harness);
    describeAuditChainContract(harness);
  });
}
