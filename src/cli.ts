#!/usr/bin/env node
// The `tracelake` command: argv -> the command table (src/cli/commands.ts). The single binary runs this
// same module after unpacking its runtime files, so both have exactly the same commands.
import { runCli } from './cli/commands.js';

runCli(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`tracelake: ${(err as Error).message}\n`);
  process.exit(1);
});
