// Guarantees: the command table is the CLI: `tracelake --help` lists every command's usage and every
// environment variable, `<command> --help` prints that command's usage, an unknown command exits 2,
// and an unknown action of a group names the group's usage without creating a data folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMANDS, ENVIRONMENT, usage } from '../../src/cli/commands.js';
import { ROOT } from '../../scripts/binary/config.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const cli = (args: string[], data = '') =>
  spawnSync(process.execPath, [...nodeEntry(join(ROOT, 'src', 'cli.ts')), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TRACELAKE_DATA: data },
  });

test('the help text is generated from the table', () => {
  const text = usage();
  for (const c of COMMANDS) for (const u of c.usage) assert.ok(text.includes(`tracelake ${u}`), u);
  for (const [name] of ENVIRONMENT) assert.ok(text.includes(name), name);
  assert.equal(new Set(COMMANDS.map((c) => c.name)).size, COMMANDS.length, 'command names are unique');
});

test('the CLI dispatches through the table', () => {
  const help = cli(['--help']);
  assert.equal(help.status, 0, help.stderr);
  assert.equal(help.stdout.trim(), usage());
  const own = cli(['members', '--help']);
  assert.equal(own.stdout, `Usage:\n  tracelake ${COMMANDS.find((c) => c.name === 'members')!.usage[0]}\n`);
  const unknown = cli(['frobnicate']);
  assert.equal(unknown.status, 2);
  const data = join(tempDir(), 'data');
  const action = cli(['keys', 'rotate'], data);
  assert.equal(action.status, 1);
  assert.match(action.stderr, /unknown command: keys rotate\n\nUsage:\n {2}tracelake keys create/);
  assert.equal(existsSync(data), false, 'no data folder is created for a typo');
});
