// writeTopLists on one segment (a copy), with the store's memory limit: peak and outcome.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
const root = process.env.TL_ROOT ?? '/work/main';
const { Database } = await import(root + '/dist/src/db/database.js');
const { writeTopLists, topListRows } = await import(root + '/dist/src/storage/indexes/top-lists.js');
const [seg, depth] = [process.argv[2], Number(process.argv[3])];
const m = JSON.parse(readFileSync(process.argv[4], 'utf8'));
const entry = m.segments.find((s) => seg.endsWith(s.file));
const tmp = mkdtempSync('/tmp/s16/tl-');
const abs = tmp + '/seg.parquet';
copyFileSync(seg, abs);
const db = await Database.open({ memoryLimit: '384MB', tempDirectory: tmp + '/t' });
const t = performance.now();
try {
  await db.withConnection((c) => writeTopLists(c, abs, entry.metrics, depth));
  console.log('ok', ((performance.now() - t) / 1000).toFixed(1), 's');
} catch (e) { console.log('failed', String(e).slice(0, 120)); }
