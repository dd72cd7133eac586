#!/usr/bin/env node
// The `gatehouse` command. Node >= 22.18 runs the TypeScript sources directly.
import "../src/cli.ts";
