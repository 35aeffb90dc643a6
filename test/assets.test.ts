// Guarantees: runtime files are declared once (RUNTIME_ASSETS) and read only through assetPath():
// every declared entry exists, an undeclared or escaping path is refused in every build (so a file the
// binary would lack fails here, without building it), and no other source file uses import.meta
// (empty in the binary's bundle).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { AssetError, assetPath, assetRoot, isDeclaredAsset, RUNTIME_ASSETS } from '../src/assets.js';
import { ROOT } from '../scripts/binary/config.js';

test('every declared runtime file exists in the package, and resolves under the package root', () => {
  assert.equal(assetRoot(), ROOT.replace(/\/$/, ''));
  for (const entry of RUNTIME_ASSETS) {
    const p = assetPath(entry);
    assert.ok(existsSync(p), `${entry} -> ${p}`);
    assert.equal(statSync(p).isDirectory(), entry.endsWith('/'), `${entry}: a trailing slash marks a folder`);
  }
});

test('undeclared and escaping paths are refused', () => {
  assert.throws(
    () => assetPath('data/scorers/README.md'),
    (e: unknown) => e instanceof AssetError && /add it to RUNTIME_ASSETS in src\/assets.ts/.test(e.message),
  );
  for (const bad of ['/etc/passwd', '../package.json', 'data/../../x', 'data\\scorers\\presets.json'])
    assert.throws(() => assetPath(bad), AssetError, bad);
  assert.equal(assetPath('data/./scorers/presets.json'), assetPath('data/scorers/presets.json'), 'paths are normalised before the check');
  assert.equal(isDeclaredAsset('package.json'), true);
  assert.equal(isDeclaredAsset('package.jsonx'), false);
});

test('only src/assets.ts uses import.meta', () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts') && /import\.meta/.test(readFileSync(p, 'utf8').replace(/\/\/.*$/gm, '')))
        offenders.push(relative(ROOT, p));
    }
  };
  walk(join(ROOT, 'src'));
  assert.deepEqual(offenders, [join('src', 'assets.ts')], 'read runtime files through assetPath() instead');
});
