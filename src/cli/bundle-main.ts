// The entry of dist/tracelake.mjs, the CLI as one file (scripts/bundle-dist.ts): src/cli.ts runs it.
import { main } from './main.js';

main();
