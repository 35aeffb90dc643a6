// The package version, read once from package.json (a declared runtime file, so the single binary
// has it too). An unreadable package.json fails loudly: a silent 0.0.0 once hid a broken bundle.
import { readFileSync } from 'node:fs';
import { assetPath } from './assets.js';

function readVersion(): string {
  const file = assetPath('package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
  if (pkg.name !== 'tracelake' || !pkg.version) throw new Error(`${file} is not tracelake's package.json`);
  return pkg.version;
}

export const VERSION = readVersion();
