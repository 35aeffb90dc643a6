// Guarantees: the builder behind `npm run build:binary` makes one executable that runs without Node:
// under `env -i` (no node on PATH) from another folder it has every CLI command, serves the v2 API
// (health, the viewer's page, projects, logging, partial_search, count, scorers, restart with the data intact), passes
// the official-client end-to-end suite, unpacks its files once into a content-addressed cache folder
// that parallel first starts share, refuses a noexec cache folder by saying so, and ships as an
// archive whose checksum verifies.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { VERSION } from '../../src/version.js';
import { everyKindTrace, tempDir } from '../support/helpers.js';
import { buildOnce, cacheEntries, outsideFolder, presetCount, runBinary, serveBinary, unsupported } from './support.js';
import { USE_DIST } from '../support/node-entry.js';
import { unshareAsRoot } from '../support/user-namespace.js';

const skip = unsupported();

test('the binary: commands, version and help', { skip }, async () => {
  const { binary } = await buildOnce();
  const cache = { TRACELAKE_CACHE_DIR: join(tempDir(), 'cache') };
  const version = runBinary(binary, ['--version'], cache);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), VERSION);
  const help = runBinary(binary, ['--help'], cache);
  assert.equal(help.status, 0, help.stderr);
  for (const c of COMMANDS) {
    for (const line of c.usage) assert.ok(help.stdout.includes(`tracelake ${line}`), `--help lists: ${line}`);
    const own = runBinary(binary, [c.name, '--help'], cache);
    assert.equal(own.status, 0, `${c.name} --help: ${own.stderr}`);
    assert.deepEqual(
      own.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.trim()),
      c.usage.map((u) => `tracelake ${u}`),
    );
  }
  const unknown = runBinary(binary, ['no-such-command'], cache);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown command: no-such-command/);
});

test('the binary: smoke flow under env -i, restart, admin commands', { skip }, async (t) => {
  const { binary } = await buildOnce();
  const { cwd } = outsideFolder();
  const key = `tl_bin_${process.pid}`;
  // A relative data folder: resolved against the folder the binary runs in, not the repository.
  const env = { TRACELAKE_CACHE_DIR: join(tempDir(), 'cache'), TRACELAKE_API_KEY: key, TRACELAKE_DATA: 'traces', TRACELAKE_PORT: '0' };
  let server = await serveBinary(t, binary, env, cwd);
  const health = await fetch(`${server.url}/healthcheck`).then((r) => r.json());
  assert.deepEqual(health, { api_version: 'v2', message: 'ok', version: VERSION });
  // The viewer ships inside too: its page and the script it names.
  const page = await fetch(`${server.url}/ui/`);
  assert.equal(page.status, 200);
  const script = /src="(\/ui\/[^"]+\.js)"/.exec(await page.text())?.[1];
  assert.ok(script, 'the viewer page names its script');
  assert.equal((await fetch(`${server.url}${script}`)).status, 200);
  const project = await server.call('POST', '/v2/projects', { name: 'binary-smoke' });
  assert.equal(project.status, 200, JSON.stringify(project.body));
  const pid = project.body.id as string;
  const stream = await server.call('POST', `/v2/projects/${pid}/log_streams`, { name: 'default' });
  assert.equal(stream.status, 200, JSON.stringify(stream.body));
  const ls = stream.body.id as string;
  const logged = await server.call('POST', `/v2/projects/${pid}/traces`, {
    log_stream_id: ls,
    traces: ['a', 'b', 'c'].map((tag) => everyKindTrace(tag)),
  });
  assert.equal(logged.status, 200, JSON.stringify(logged.body));
  const queries = async () => {
    const page = await server.call('POST', `/v2/projects/${pid}/traces/partial_search`, {
      log_stream_id: ls,
      select_columns: { column_ids: ['name', 'metrics/num_input_tokens'] },
      sort: { column_id: 'name', ascending: true },
      include_counts: true,
    });
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const llm = await server.call('POST', `/v2/projects/${pid}/spans/count`, {
      log_stream_id: ls,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    });
    const all = await server.call('POST', `/v2/projects/${pid}/spans/count`, { log_stream_id: ls });
    return {
      names: page.body.records.map((r: { name: string }) => r.name),
      spans: page.body.records.map((r: { num_spans: number }) => r.num_spans),
      llm: llm.body.total_count,
      all: all.body.total_count,
    };
  };
  const before = await queries();
  assert.deepEqual(before.names, ['trace-a', 'trace-b', 'trace-c']);
  assert.ok(before.llm > 0 && before.all > before.llm, JSON.stringify(before));
  const scorers = await server.call('POST', '/v2/scorers/list', { filters: [] });
  assert.equal(scorers.status, 200, JSON.stringify(scorers.body).slice(0, 300));
  const listed = await server.call('POST', '/v2/scorers/list?limit=1000', {
    filters: [{ name: 'scorer_type', value: 'preset', operator: 'eq' }],
  });
  assert.equal(listed.status, 200, JSON.stringify(listed.body).slice(0, 300));
  assert.equal(listed.body.scorers.length, presetCount(ROOT), 'every built-in scorer preset is served');

  assert.equal(await server.stop(), 0, `the server exits 0 on SIGTERM: ${server.stdout()}`);
  assert.ok(readdirSync(join(cwd, 'traces')).length > 0, 'the data folder was made under the working folder');
  // Admin commands run against the folder while no server holds it; their key then works.
  const user = runBinary(binary, ['users', 'create', '--email', 'ops@example.com', '--admin'], env, cwd);
  assert.equal(user.status, 0, user.stderr);
  const made = runBinary(binary, ['keys', 'create', '--email', 'ops@example.com'], env, cwd);
  assert.equal(made.status, 0, made.stderr);
  const opsKey = /\n\s+(\S+)\s*$/.exec(made.stdout)?.[1];
  assert.ok(opsKey, made.stdout);
  const members = runBinary(
    binary,
    ['members', 'add', '--project', 'binary-smoke', '--email', 'ops@example.com', '--role', 'viewer'],
    env,
    cwd,
  );
  assert.equal(members.status, 0, members.stderr);

  server = await serveBinary(t, binary, env, cwd);
  assert.deepEqual(await queries(), before, 'the same answers after a restart');
  const asOps = await fetch(`${server.url}/v2/projects/${pid}`, { headers: { 'Galileo-API-Key': opsKey } });
  assert.equal(asOps.status, 200, 'a key made by `keys create` is accepted');
  assert.equal(await server.stop(), 0);
});

test('the binary: the official-client end-to-end suite passes against it', { skip }, async () => {
  const { binary } = await buildOnce();
  const suite = ['test/e2e/official-client.test.ts', 'test/e2e/official-client-older.test.ts'];
  // A test run of its own: without NODE_TEST_CONTEXT it does not report into this one.
  const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
  // Compiled from dist/ when run.mjs found it current (node-entry.ts), else through tsx.
  const run = USE_DIST
    ? ['--enable-source-maps', '--test', '--test-reporter=spec', ...suite.map((f) => join('dist', f.replace(/\.ts$/, '.js')))]
    : ['--import', 'tsx', '--test', '--test-reporter=spec', ...suite];
  const child = spawn(process.execPath, run, {
    cwd: ROOT,
    env: { ...env, TRACELAKE_E2E_SERVER: binary, TRACELAKE_CACHE_DIR: join(tempDir(), 'cache') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, out.slice(-6000));
  assert.ok(out.includes(`server: ${binary}`), `the suite ran against the binary:\n${out.slice(-3000)}`);
  assert.doesNotMatch(out, /server: src\/cli\.ts/);
  assert.match(out, /ℹ fail 0/);
  // A client test that skipped would prove nothing about the binary.
  assert.match(out, /ℹ skipped 0/, 'no test of the suite skipped');
  assert.match(out, /ℹ todo 0/);
  assert.match(out, /ℹ pass [1-9]/);
});

test('the binary: parallel first starts share one cache folder', { skip }, async () => {
  const { binary } = await buildOnce();
  const base = join(tempDir(), 'cache');
  const runs = await Promise.all(
    Array.from(
      { length: 4 },
      () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const c = spawn(binary, ['--version'], {
            cwd: outsideFolder().cwd,
            env: { TRACELAKE_CACHE_DIR: base },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          c.stdout.on('data', (d: Buffer) => (out += d.toString()));
          c.stderr.on('data', (d: Buffer) => (out += d.toString()));
          c.once('exit', (code) => resolve({ code, out }));
        }),
    ),
  );
  for (const r of runs) assert.deepEqual(r, { code: 0, out: `${VERSION}\n` });
  const entries = cacheEntries(base);
  assert.equal(entries.length, 1, `one published folder, no temporary leftovers: ${entries.join(', ')}`);
  assert.match(entries[0]!, new RegExp(`^tracelake-${VERSION.replace(/\./g, '\\.')}-[0-9a-f]{16}$`));
  assert.ok(existsSync(join(base, entries[0]!, 'native', 'libduckdb.so')));
  assert.ok(existsSync(join(base, entries[0]!, 'data', 'scorers', 'presets.json')));
});

test('the binary: a noexec cache folder is refused with a message that says so', { skip }, async (t) => {
  const { binary } = await buildOnce();
  // The noexec tmpfs lives in a mount namespace of the binary's own (as root, or in a user namespace
  // as another user): mounted there, gone with it.
  const ns = unshareAsRoot(['-m']);
  if ('why' in ns) {
    t.skip(ns.why);
    return;
  }
  const point = join(tempDir(), 'noexec');
  mkdirSync(point);
  const script = 'mount -t tmpfs -o noexec,size=256m tmpfs "$1" || exit 90; exec "$2" --version';
  const r = spawnSync(ns.prefix[0]!, [...ns.prefix.slice(1), 'sh', '-c', script, 'sh', point, binary], {
    cwd: outsideFolder().cwd,
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', TRACELAKE_CACHE_DIR: join(point, 'cache') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.notEqual(r.status, 90, `the noexec tmpfs could not be mounted: ${r.stderr}`);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /mounted noexec/);
  assert.match(r.stderr, /TRACELAKE_CACHE_DIR/);
});

test('the binary: the release archive verifies and runs', { skip }, async () => {
  const { archive, version } = await buildOnce();
  assert.ok(archive, 'the archive was made');
  const dir = tempDir();
  const check = spawnSync('sha256sum', ['-c', archive.checksum], { cwd: join(archive.archive, '..'), encoding: 'utf8' });
  assert.equal(check.status, 0, check.stdout + check.stderr);
  const untar = spawnSync('tar', ['-xzf', archive.archive, '-C', dir], { encoding: 'utf8' });
  assert.equal(untar.status, 0, untar.stderr);
  const top = join(dir, `tracelake-${version}-linux-x64`);
  assert.deepEqual(readdirSync(top).sort(), ['README.txt', 'licenses', 'tracelake']);
  const r = runBinary(join(top, 'tracelake'), ['--version'], { TRACELAKE_CACHE_DIR: join(dir, 'cache') });
  assert.equal(r.stdout.trim(), version, r.stderr);
});
