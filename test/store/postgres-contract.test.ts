import { describeStoreContract } from "./contract/index.ts";
import { usePostgresServer } from "./postgres-server.ts";

describeStoreContract("PostgreSQL", usePostgresServer().harness);
