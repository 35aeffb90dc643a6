// Guarantees: a case-insensitive `contains` of an ASCII needle, compiled as a regular expression over
// the stored text (compile-filter.ts caselessPattern), and as the filter the compiler writes with it
// (caselessContains: an ASCII pattern first for needles starting with i or k), match exactly the rows
// that contains(lower(text), lower(needle)) matches, in DuckDB itself, for needles full of regular-
// expression syntax and texts with the characters DuckDB lowers into ASCII (İ, the Kelvin sign) and
// others it does not (ß, Σ, ǅ, ſ, ﬁ).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { caselessContains, caselessPattern } from '../../src/query/compile-filter.js';
import { sql } from '../../src/query/sql.js';

const TEXTS = [
  'İstanbul',
  'ISTANBUL',
  'istanbul',
  '\u212Aelvin',
  'kelvin',
  'KELVIN',
  'Straße',
  'STRASSE',
  'ΣΑΣ',
  'ǅemal',
  'ſtop',
  'ﬁne',
  'a.b*c',
  'a+b?c',
  'x\\y',
  '[x](y){z}|^$',
  'line\nbreak',
  'tab\there',
  '100% _done_',
  'MiXeD CaSe',
  'İnclude \u212Aeys',
  'inclİde',
  'İK',
  'ıi',
  '',
];
const NEEDLES = [
  'i',
  'I',
  'k',
  'K',
  'st',
  'STAN',
  'ss',
  'stop',
  'fine',
  '.',
  '*',
  '+',
  '?',
  '\\',
  '[',
  ']',
  '(',
  ')',
  '{',
  '}',
  '|',
  '^',
  '$',
  'a.b',
  'b*c',
  '%',
  '_',
  '% _',
  '\n',
  '\t',
  ' ',
  'mixed case',
  'elvin',
  'x](y',
  'e\nb',
  'include',
  'INCLUDE keys',
  'Keys',
  'ik',
  'ki',
];

test('the caseless pattern matches exactly what lower() and contains() match', async () => {
  const db = await Database.open({ threads: 1 });
  try {
    let checked = 0;
    for (const n of NEEDLES) {
      const pattern = caselessPattern(n);
      assert.notEqual(pattern, null, JSON.stringify(n));
      const rows = await db.all(
        sql`SELECT t, regexp_matches(t, ${pattern}) AS re, ${caselessContains(sql`t`, n)} AS f, contains(lower(t), lower(${n})) AS lc
            FROM (SELECT unnest(${TEXTS}::VARCHAR[]) AS t)`,
      );
      for (const row of rows) {
        assert.equal(row['re'], row['lc'], `needle ${JSON.stringify(n)} in ${JSON.stringify(row['t'])}`);
        assert.equal(row['f'], row['lc'], `the filter: needle ${JSON.stringify(n)} in ${JSON.stringify(row['t'])}`);
        checked++;
      }
    }
    assert.equal(checked, TEXTS.length * NEEDLES.length);
    assert.equal(caselessPattern(''), null);
    assert.equal(caselessPattern('é'), null);
    assert.equal(caselessContains(sql`t`, 'é'), null);
  } finally {
    await db.close();
  }
});
