// How tests start a TypeScript entry point of this repository in a child Node process. test/run.mjs
// sets TRACELAKE_TEST_DIST=1 only when dist/ (tsc's output, which `npm test` and `npm install` write)
// is newer than every source file; then a child runs the compiled copy and skips tsx, which costs
// about a second of CPU per process. Otherwise (a source edited since the last build, or node --test
// run directly) it goes through tsx, so a child never runs stale code.
import { isAbsolute, join, relative } from 'node:path';
import { ROOT } from '../../scripts/binary/config.js';

export const USE_DIST = process.env['TRACELAKE_TEST_DIST'] === '1';

/** Node arguments that run `file` (a .ts path, absolute or relative to the repository root). */
export function nodeEntry(file: string): string[] {
  if (!USE_DIST) return ['--import', 'tsx', file];
  const rel = isAbsolute(file) ? relative(ROOT, file) : file;
  return [join(ROOT, 'dist', rel.replace(/\.ts$/, '.js'))];
}

/** Node's own options for a child forked with `file` from nodeEntry (tsx's loader, or none). */
export function entryExecArgv(): string[] {
  return USE_DIST ? [] : ['--import', 'tsx'];
}
