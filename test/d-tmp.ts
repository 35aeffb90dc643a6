import { TraceStore } from '../src/engine/trace-store.js';
import { buildServer } from '../src/server/build-server.js';
import { mkdtempSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const store = await TraceStore.open(mkdtempSync('/tmp/contract/l-'));
const app = buildServer({ store });
const url = await app.listen({ port: 0 });
const t0 = Date.now();
const { spawn } = await import('node:child_process');
const out: string = await new Promise((resolve) => {
  const c = spawn('/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${mkdtempSync('/tmp/contract/chr-')}`, '--virtual-time-budget=20000', '--dump-dom', `${url}/docs`]);
  let s = ''; c.stdout.on('data', (d) => (s += d)); c.on('close', () => resolve(s));
});
console.log(Date.now() - t0, 'ms', out.length);
const paths = [...out.matchAll(/data-path="([^"]+)"/g)].map((m) => m[1]);
console.log(paths.length, paths.slice(0, 5));
console.log([...out.matchAll(/opblock-summary-method">(\w+)</g)].length);
(await import("node:fs")).writeFileSync('/tmp/contract/dom.html', out);
await app.close(); await store.close();
