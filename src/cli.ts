#!/usr/bin/env node
// The `tracelake` command: argv -> the command table (src/cli/commands.ts). From a build it runs the
// CLI's one-file bundle when that is current (src/cli/bundle-choice.ts), else the modules themselves.
// The single binary runs src/cli/main.ts, so all three have exactly the same commands.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { cliBundle } from './cli/bundle-choice.js';

// This file is always the script Node runs (npm's bin link resolves to it), so argv[1] is its path.
const bundle = process.argv[1] ? cliBundle(realpathSync(process.argv[1])) : null;
if (bundle) await import(pathToFileURL(bundle).href);
else (await import('./cli/main.js')).main();
