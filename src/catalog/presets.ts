// The built-in ("preset") scorers shipped in data/scorers/presets.json (see its README), read once
// when a store opens. They are read-only: never written to the catalog log, never changed or
// deleted, and every entry is checked against the Scorer schema and the scorer rules on load, so a
// bad edit of the data file fails loudly at open instead of surfacing as a broken list.
import { existsSync, readFileSync } from 'node:fs';
import { Compile } from '../vendor/typebox.js';
import { assetPath } from '../assets.js';
import { StorageError } from '../errors.js';
import { Scorer, type ScorerVersion } from '../schemas/scorers.js';
import { checkColorPicker, checkRollUp } from './scorer-validate.js';
import type { ScorerRow } from './scorer-row.js';

export interface Presets {
  rows: ScorerRow[];
  versions: Map<string, ScorerVersion>;
}

let cached: Presets | undefined;

export function loadPresets(): Presets {
  if (cached) return cached;
  const file = assetPath('data/scorers/presets.json');
  if (!existsSync(file)) throw new StorageError('the built-in scorer catalog data/scorers/presets.json was not found');
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new StorageError(`cannot read ${file}`, { cause: err });
  }
  if (!Array.isArray(list)) throw new StorageError(`${file} must hold a JSON array of scorers`);
  const check = Compile(Scorer);
  const rows: ScorerRow[] = [];
  const versions = new Map<string, ScorerVersion>();
  list.forEach((raw: unknown, i) => {
    if (!check.Check(raw)) {
      const first = [...check.Errors(raw)][0] as { instancePath?: string; message?: string } | undefined;
      throw new StorageError(`${file}: entry ${i} is not a valid scorer (${first?.instancePath ?? ''} ${first?.message ?? ''})`);
    }
    const s = raw as Scorer;
    try {
      checkRollUp(s, ['presets', i]);
      checkColorPicker(s.metric_color_picker_config, ['presets', i, 'metric_color_picker_config']);
    } catch (err) {
      throw new StorageError(`${file}: entry ${i} (${s.name}) breaks a scorer rule: ${(err as Error).message}`);
    }
    for (const v of [s.latest_version, s.default_version]) if (v) versions.set(v.id, v);
    const { permissions: _p, latest_version, default_version: _d, scope_projects: _s, created_by_user: _u, ...rest } = s;
    rows.push({ ...rest, scope_project_ids: [], latest_version_id: latest_version?.id ?? null } as ScorerRow);
  });
  cached = { rows, versions };
  return cached;
}
