// Runs every test file (test/**/*.test.ts) with node:test through the tsx loader.
// Usage: node test/run.mjs [substring-filter ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(relative(root, p));
  }
};
walk(join(root, 'test'));
const filters = process.argv.slice(2);
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Every server a test starts (in process or as a child) checks its answers against the OpenAPI document.
const env = { ...process.env, TRACELAKE_CHECK_CONTRACT: '1' };
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...selected], { cwd: root, stdio: 'inherit', env });
process.exit(result.status ?? 1);
