import { openSqliteStore } from "../../src/store/sqlite-store.ts";
import { describeStoreContract } from "./contract/index.ts";
import { tempDataDir } from "./temp-dir.ts";

describeStoreContract("SQLite", {
  freshLocation: async () => tempDataDir(),
  open: (dataDir, options) => openSqliteStore({ dataDir, ...options }),
});
