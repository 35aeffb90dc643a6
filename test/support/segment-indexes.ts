// For the index tests: the segments a folder's manifest lists (with their absolute paths), and which of
// them have a usable child index (the index and its row file; `also`: more a test requires).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { childIndexUsable, childRowsHeader, childRowsPath } from '../../src/storage/indexes/child-index.js';

export interface ListedSegment {
  file: string;
  rows: number;
  min_seq: number;
  max_seq: number;
  abs: string;
}

export const listedSegments = (dir: string): ListedSegment[] =>
  (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: ListedSegment[] }).segments.map((s) => ({
    ...s,
    abs: join(dir, s.file),
  }));

export async function childIndexesUsable(dir: string, also: (s: ListedSegment) => boolean = () => true): Promise<boolean[]> {
  const db = await Database.open({});
  try {
    const conn = await db.dedicated();
    const out: boolean[] = [];
    for (const s of listedSegments(dir))
      out.push((await childIndexUsable(conn, s.abs, s)) && (await childRowsHeader(conn, childRowsPath(s.abs), s.rows)) !== null && also(s));
    return out;
  } finally {
    await db.close();
  }
}
