// Whether `tracelake` (src/cli.ts) runs the CLI's one-file bundle: a process loading one file starts
// ~0.3 s sooner than one loading the ~800 modules of the build and its packages (`tracelake serve` to
// listening 1.2 -> 0.9 s on a 2-core machine). Only from a build (dist/src/cli.js), and only when the
// bundle is at least as new as the build: a tsc run after the bundle was made leaves it stale, and the
// modules then run instead, so an edit is never shadowed by an old bundle.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The bundle's file name, beside dist/src. */
export const CLI_BUNDLE = 'tracelake.mjs';

/** The bundle to run instead of the modules, for the entry file `cli` (src/cli.ts or dist/src/cli.js), or null. */
export function cliBundle(cli: string): string | null {
  if (basename(cli) !== 'cli.js' || basename(dirname(cli)) !== 'src' || basename(dirname(dirname(cli))) !== 'dist') return null;
  if (process.env['TRACELAKE_NO_BUNDLE'] === '1') return null;
  const bundle = join(dirname(dirname(cli)), CLI_BUNDLE);
  if (!existsSync(bundle)) return null;
  return statSync(bundle).mtimeMs >= statSync(cli).mtimeMs ? bundle : null;
}
