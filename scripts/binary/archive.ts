// The release archive: tracelake-<version>-linux-x64.tar.gz (or .tar.xz) holding the binary, a short
// README and the licenses of what it embeds, with a sha256 file that `sha256sum -c` checks.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { TARGET } from './config.js';
import { run } from './run.js';

export interface ArchiveInputs {
  binary: string;
  version: string;
  nodeLicense: string;
  duckdbLicense: string;
  outDir: string;
  format: 'gz' | 'xz';
}

const README = (version: string) => `tracelake ${version} for ${TARGET.label} (glibc)

One executable with Node.js and DuckDB inside: no Node installation needed.

  ./tracelake serve --data ./traces        # serves the API on http://127.0.0.1:8088
  ./tracelake --help                       # every command and environment variable

Needs Linux x86-64 with glibc 2.28 or newer, libstdc++ and libatomic (Debian 10+, Ubuntu 20.04+,
RHEL 8+; not Alpine/musl). On first start it unpacks DuckDB's library (about 70 MB) into
~/.cache/tracelake (TRACELAKE_CACHE_DIR overrides it; the folder must allow executing files).
`;

export function makeArchive(a: ArchiveInputs): { archive: string; checksum: string; sha256: string } {
  const name = `tracelake-${a.version}-${TARGET.label}`;
  const staging = mkdtempSync(join(tmpdir(), 'tracelake-archive-'));
  try {
    const top = join(staging, name);
    mkdirSync(join(top, 'licenses'), { recursive: true });
    copyFileSync(a.binary, join(top, 'tracelake'));
    writeFileSync(join(top, 'README.txt'), README(a.version));
    copyFileSync(a.nodeLicense, join(top, 'licenses', 'node.txt'));
    copyFileSync(a.duckdbLicense, join(top, 'licenses', 'duckdb.txt'));
    const archive = join(a.outDir, `${name}.tar.${a.format}`);
    run('tar', [a.format === 'gz' ? '-czf' : '-cJf', archive, '-C', staging, '--owner=0', '--group=0', '--numeric-owner', name], {
      env: { ...process.env, XZ_OPT: '-6 -T0' },
    });
    const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
    const checksum = `${archive}.sha256`;
    writeFileSync(checksum, `${sha256}  ${basename(archive)}\n`);
    return { archive, checksum, sha256 };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
