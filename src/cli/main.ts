// The command line run on this process's arguments: a failure prints its message and exits 1. The one
// way in for `tracelake` (src/cli.ts), its one-file bundle (dist/tracelake.mjs) and the single binary.
import { runCli } from './commands.js';

export function main(argv: string[] = process.argv.slice(2)): void {
  runCli(argv).catch((err: unknown) => {
    process.stderr.write(`tracelake: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
