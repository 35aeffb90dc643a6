// ClickHouse (npm `chdb`, in-process ClickHouse) as an independent reader of the Iceberg tables,
// run in a child process: its native library is large and keeps state, and the tests want another
// process anyway. chdb is a test-only dependency in test/deps (installed by .ci/run with
// `npm install --prefix test/deps`); without it the tests that need it skip, naming that command.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../scripts/binary/config.js';

export const TEST_DEPS = join(ROOT, 'test', 'deps');
export const INSTALL_TEST_DEPS = 'npm install --prefix test/deps --no-audit --no-fund';

/** Why the Iceberg reader tests cannot run here (undefined: they can). */
export function testDepsMissing(): string | undefined {
  for (const pkg of ['chdb', 's3rver']) {
    if (!existsSync(join(TEST_DEPS, 'node_modules', pkg, 'package.json')))
      return `${pkg} is not installed in test/deps: run \`${INSTALL_TEST_DEPS}\``;
  }
  return undefined;
}

/**
 * Runs ClickHouse queries in a child process whose working directory is `cwd` (chdb reads local files
 * only below it) and returns each query's rows (JSONEachRow, numbers as JSON numbers).
 */
export function chdbQueries(cwd: string, queries: readonly string[]): Promise<Record<string, unknown>[][]> {
  return new Promise((resolve, reject) => {
    const args = [join(ROOT, 'test', 'support', 'chdb-child.mjs')];
    execFile(
      process.execPath,
      args,
      { cwd, env: { ...process.env, TL_CHDB_QUERIES: JSON.stringify(queries) }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`chdb failed: ${stderr || err.message}`));
        try {
          resolve(JSON.parse(stdout) as Record<string, unknown>[][]);
        } catch {
          reject(new Error(`chdb printed no JSON: ${stdout.slice(0, 2000)} ${stderr.slice(0, 2000)}`));
        }
      },
    );
  });
}
