// `npm run build:binary`: dist/bin/tracelake, one executable for linux-x64 (glibc) that runs without
// Node. Steps: pinned Node base -> esbuild bundle -> blob (bundle + runtime files + DuckDB) made by
// that same base -> postject injects the blob into a copy of the base -> a --version self-check.
// Options: --out DIR (default dist/bin), --archive gz|xz (also write the release archive).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeArchive } from './archive.js';
import { blobAssets } from './blob-assets.js';
import { bundle } from './bundle.js';
import { DUCKDB_PACKAGE, NODE_BASE, ROOT, SEA_FUSE, TARGET } from './config.js';
import { nodeBase } from './node-base.js';
import { run } from './run.js';

const log = (s: string) => process.stderr.write(`build:binary: ${s}\n`);

export interface BuildResult {
  binary: string;
  version: string;
  bytes: number;
  seconds: Record<string, number>;
  archive?: { archive: string; checksum: string; sha256: string };
}

export async function buildBinary(options: { out: string; archive?: 'gz' | 'xz' }): Promise<BuildResult> {
  if (process.platform !== TARGET.platform || process.arch !== TARGET.arch) {
    throw new Error(`the binary is built on ${TARGET.label} (the base makes its own blob); this is ${process.platform}-${process.arch}`);
  }
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const seconds: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    seconds[name] = Math.round(now - t) / 1000;
    t = now;
  };
  const base = nodeBase(log);
  lap('base');
  const work = mkdtempSync(join(tmpdir(), 'tracelake-binary-'));
  try {
    await bundle(join(work, 'tracelake.cjs'), log);
    lap('bundle');
    const { assets } = blobAssets(work, version, log);
    lap('assets');
    const config = {
      main: 'tracelake.cjs', // relative: stack traces name the bundle, not this build's folder
      output: 'sea-prep.blob',
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false, // saves ~70 ms but rejects its cache whenever a V8 flag differs
      execArgvExtension: 'none', // NODE_OPTIONS is ignored: a stray --require cannot break the binary
      assets,
    };
    writeFileSync(join(work, 'sea-config.json'), JSON.stringify(config, null, 2));
    run(base.node, ['--experimental-sea-config', 'sea-config.json'], { cwd: work });
    lap('blob');
    mkdirSync(options.out, { recursive: true });
    const binary = join(options.out, 'tracelake');
    const partial = `${binary}.partial-${process.pid}`;
    copyFileSync(base.node, partial);
    chmodSync(partial, 0o755);
    const { inject } = createRequire(import.meta.url)('postject') as {
      inject: (file: string, name: string, data: Buffer, o: object) => Promise<void>;
    };
    // postject reports harmless LIEF warnings on Node's ELF notes; keep its console quiet.
    const warn = console.warn;
    console.warn = () => {};
    try {
      await inject(partial, 'NODE_SEA_BLOB', readFileSync(join(work, 'sea-prep.blob')), { sentinelFuse: SEA_FUSE, overwrite: true });
    } finally {
      console.warn = warn;
    }
    renameSync(partial, binary);
    lap('inject');
    const check = spawnSync(binary, ['--version'], { env: { TRACELAKE_CACHE_DIR: join(work, 'cache') }, encoding: 'utf8', cwd: work });
    if (check.stdout.trim() !== version)
      throw new Error(`self-check: ${binary} --version printed ${JSON.stringify(check.stdout)} (expected ${version})\n${check.stderr}`);
    lap('check');
    const result: BuildResult = { binary, version, bytes: statSync(binary).size, seconds };
    if (options.archive) {
      const req = createRequire(join(ROOT, 'node_modules', '@duckdb', 'node-bindings', 'package.json'));
      const duckdbLicense = join(req.resolve(`${DUCKDB_PACKAGE}/package.json`), '..', 'LICENSE');
      result.archive = makeArchive({
        binary,
        version,
        nodeLicense: base.license,
        duckdbLicense,
        outDir: options.out,
        format: options.archive,
      });
      lap('archive');
    }
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && /[/\\]scripts[/\\]binary[/\\]build\.[jt]s$/.test(resolve(process.argv[1]))) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, archive: { type: 'string' } }, strict: true });
  if (values.archive !== undefined && values.archive !== 'gz' && values.archive !== 'xz') throw new Error('--archive takes gz or xz');
  const out = resolve(values.out ?? join(ROOT, 'dist', 'bin'));
  buildBinary({ out, ...(values.archive ? { archive: values.archive as 'gz' | 'xz' } : {}) }).then(
    (r) => {
      log(`${r.binary}: ${(r.bytes / 2 ** 20).toFixed(1)} MiB, tracelake ${r.version}, Node v${NODE_BASE.version}`);
      if (r.archive)
        log(`${r.archive.archive} (${(statSync(r.archive.archive).size / 2 ** 20).toFixed(1)} MiB), sha256 ${r.archive.sha256}`);
      log(`seconds: ${JSON.stringify(r.seconds)}`);
    },
    (err: unknown) => {
      log((err as Error).message);
      process.exit(1);
    },
  );
}
