// Strategy: what a delete removes and which parents it leaves without children, asked before the
// delete is logged (record-queries.ts logs it). A span delete runs in steps: the matching spans with
// their has_children, then the subtrees of only those that have children (most deletes hit leaf
// spans, and the subtree step reads and joins the links of every span). When every match is a leaf and
// the segments have their child indexes (storage/indexes/child-index.ts), the matches are read as seq
// and has_children only, and their parents are found through the indexes' hashes: no id or parent_id
// string is decoded. Most of those parents are settled first by the rows beside each match in its
// segment (leaf-settle.ts); the store-wide statement asks only about the rest.
// Applies to: every delete (trace and session deletes take one statement).
// Returns: the seqs of the matching rows and their descendants, and the parents' rows left childless.
// Assumes: has_children is the store's own record of a span's children (set when a child is logged,
// cleared by a delete's childless mark), the same fact the planner's data facts rely on.
import type { SqlRunner } from '../../db/database.js';
import { ident, joinSql, Sql, sql } from '../sql.js';
import { deleteHitsQuery, deleteQuery, subtreeQuery, type PlanInput } from '../plan.js';
import type { Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { deadSeqsOf, seqsAscending, settleLocally, type Unsettled } from './leaf-settle.js';
import { indexedMatches } from './delete-hits.js';
import { ascending, sortedHas } from '../../storage/memtable/seq-lists.js';
import type { Connection } from '../../db/database.js';

/** What a delete removes (seqs of matching rows and their descendants) and the parents' rows it leaves childless. */
export interface DeleteSet {
  seqs: number[];
  childless: number[];
}

/**
 * The delete set of a plan; `scope`: the delete's run or project, any kinds (spans and traces are read).
 * `steps` is told how the matches were found.
 */
export async function deleteSet(db: SqlRunner, snap: Snapshot, plan: PlanInput, scope: Scope, steps: string[] = []): Promise<DeleteSet> {
  if (plan.level === 'span' && snap.childIndexes({ ...scope, kinds: ['span', 'trace'] }) !== null) {
    const leaves = holdsConnections(db)
      ? await db.withConnection((c) => leafDelete(c, snap, plan, scope, steps))
      : await leafDeleteInJs(db, snap, plan, scope);
    if (leaves !== null) return leaves;
  }
  steps.push('delete: matches and their subtrees read from the records');
  const rows = await rowsToDelete(db, plan);
  const gone = new Set(rows.map((r) => r.id));
  const seqs = rows.map((r) => r.seq);
  const parents = [...new Set(rows.map((r) => r.parent_id).filter((p): p is string => p !== null && !gone.has(p)))];
  return { seqs, childless: parents.length > 0 ? await childlessParents(db, snap, scope, parents, seqs) : [] };
}

/** A database that lends one connection for several statements (Database.withConnection). */
interface ConnectionLender extends SqlRunner {
  withConnection<T>(fn: (c: Connection) => Promise<T>): Promise<T>;
}

function holdsConnections(db: SqlRunner): db is ConnectionLender {
  return typeof (db as Partial<ConnectionLender>).withConnection === 'function';
}

/**
 * A delete whose matches are all leaves. Matches in segments whose value index serves the filter are
 * found there (delete-hits.ts) and read no segment; the hits statement reads the other segments and
 * memory into a temporary table of the connection, whose seqs (a million at 1% of 100M spans) are
 * read out once, as one column, in seq order. Null when some match has children.
 */
async function leafDelete(c: Connection, snap: Snapshot, plan: PlanInput, scope: Scope, steps: string[]): Promise<DeleteSet | null> {
  // Read once, only when a path needs them.
  let deadRead: Promise<Float64Array> | undefined;
  const dead = () => (deadRead ??= deadSeqsOf(c, snap));
  const indexed = await indexedMatches(c, snap, plan, scope, dead);
  if (indexed === 'parents') return null;
  const hits = ident('tl_delete_hits');
  const rest: PlanInput =
    indexed === null
      ? plan
      : {
          ...plan,
          base: (metrics, text, created) => snap.source(scope, metrics, text, created, { files: indexed.files, only: false, memory: true }),
        };
  await c.run(sql`CREATE OR REPLACE TEMP TABLE ${hits} AS ${deleteHitsQuery(rest, false)}`);
  try {
    const [parents] = await c.all(sql`SELECT count(*) FILTER (WHERE has_children IS DISTINCT FROM false) AS n FROM ${hits}`);
    if (Number(parents?.['n']) > 0) return null;
    steps.push(`delete of leaves${indexed === null ? '' : `: matches of ${indexed.files.size} segments from value indexes`}`);
    // In order: the settling and the delete's own dedup then skip their sorts (1.07M seqs at 100M).
    const [col] = await c.columns(sql`SELECT seq::DOUBLE AS seq FROM ${hits} ORDER BY seq`);
    const found = (col ?? []) as number[];
    if (indexed === null)
      return {
        seqs: found,
        childless: found.length > 0 ? await childlessSettled(c, snap, scope, found, sql`(SELECT seq FROM ${hits})`) : [],
      };
    const local = await settleLocally(c, snap, scope, found, undefined, undefined, { rows: indexed.rows, dead: await dead() });
    if (local === null) throw new Error('a leaf delete over value indexes needs the row files');
    const all = new Float64Array(found.length + local.seqs.length);
    all.set(found);
    all.set(local.seqs, found.length);
    all.sort();
    return { seqs: Array.from(all), childless: all.length > 0 ? await childlessAfter(c, snap, scope, all, local) : [] };
  } finally {
    await c.run(sql`DROP TABLE IF EXISTS ${hits}`);
  }
}

/**
 * childlessOfLeaves for the rows `seqs` (also given as `gone`, a relation with a seq column), after
 * the parents their neighbours in row order keep are settled locally (leaf-settle.ts): the statement
 * then asks only about the rest. `window`: how far neighbours are compared.
 */
export async function childlessSettled(
  c: Connection,
  snap: Snapshot,
  scope: Scope,
  seqs: readonly number[],
  gone: Sql,
  window?: number,
): Promise<number[]> {
  const local = await settleLocally(c, snap, scope, seqs, window);
  if (local === null) return childlessOfLeaves(c, snap, scope, gone);
  return childlessAfter(c, snap, scope, ascendingCopy(seqs), local);
}

/** childlessOfLeaves for the removed rows `seqs` (ascending) after local settling left `local`. */
async function childlessAfter(c: Connection, snap: Snapshot, scope: Scope, seqs: Float64Array, local: Unsettled): Promise<number[]> {
  // Removed rows whose has_children a delete overrode: their index rows may hold their own id's hash,
  // which the statement must see (a parent removed itself is not marked).
  const over = Array.from(await seqsAscending(c, snap.childlessSeqs)).filter((q) => sortedHas(seqs, q));
  return childlessOfLeaves(c, snap, scope, seqs, { parentsOf: [...local.rest, ...over], hashes: local.hashes });
}

/** leafDelete on a runner that cannot hold a connection: the seqs go through JavaScript. */
async function leafDeleteInJs(db: SqlRunner, snap: Snapshot, plan: PlanInput, scope: Scope): Promise<DeleteSet | null> {
  const hits = await db.all(deleteHitsQuery(plan, false));
  if (!hits.every((r) => r['has_children'] === false)) return null;
  const seqs = hits.map((r) => Number(r['seq']));
  return { seqs, childless: seqs.length > 0 ? await childlessOfLeaves(db, snap, scope, seqs) : [] };
}

/**
 * A list of seqs as SQL: one comma-joined string split by DuckDB. The driver binds a long list value
 * element by element, many times slower than one string.
 */
function seqList(seqs: readonly number[]): Sql {
  return seqs.length === 0 ? sql`[]::BIGINT[]` : sql`string_split(${seqs.join(',')}, ',')::BIGINT[]`;
}

/** Parent hashes (unsigned 64-bit) as SQL, as seqList does for seqs. */
function hashList(hashes: readonly bigint[]): Sql {
  return sql`string_split(${hashes.join(',')}, ',')::UBIGINT[]`;
}

/**
 * What local settling (leaf-settle.ts) left: the parent hashes of matches it did not settle, and the
 * removed rows it did not look at, whose parents the statement reads from the indexes or memory.
 */
export interface SettledLinks {
  parentsOf: readonly number[];
  hashes: readonly bigint[];
}

const union = (parts: readonly Sql[]) => joinSql(parts, ' UNION ALL ');
const files = (paths: readonly string[]) => sql`read_parquet(${paths}, hive_partitioning = false)`;

/**
 * What both index lookups read: the child index files of the scope's span segments (children) and of
 * its span and trace segments (owners), and the rows in memory of each as SQL sources. Null when a
 * segment lacks its index (retention on the scope, a file missing).
 */
function indexedParts(snap: Snapshot, scope: Scope) {
  const s: Scope = { ...scope, kinds: ['span'] };
  const o: Scope = { ...scope, kinds: ['span', 'trace'] };
  const kids = snap.childIndexes(s);
  const owned = snap.childIndexes(o);
  if (kids === null || owned === null) return null;
  const memOnly = { files: new Set<string>(), only: true, memory: true };
  const children = snap.source(s, [], [], null, memOnly);
  const owners = snap.source(o, [], [], null, memOnly);
  return { kids, owned, children, owners };
}

/**
 * childlessParents for a delete of the rows `goneSeqs` (a list, or a relation with a seq column) that have no children: their parents are the
 * parent_id hashes of those rows (from the child indexes, or the rows themselves in memory). A row's
 * id is unique in its run, so a parent that is itself deleted is left out by its seq; hashes of
 * deleted rows' own ids (those with children) are left out too, as the string path leaves out
 * deleted ids (it matters only for ids repeated across the runs of a project-wide delete).
 * The removed rows are left out of the statements' answers here, by binary search, not in SQL: the
 * answers are the few rows under or owning the parents asked about, where a million removed seqs
 * written into a table of the statement cost a third of a second at 100M spans.
 */
export async function childlessOfLeaves(
  db: SqlRunner,
  snap: Snapshot,
  scope: Scope,
  goneSeqs: ArrayLike<number> | Sql,
  settled?: SettledLinks,
): Promise<number[]> {
  const ix = indexedParts(snap, scope);
  if (ix === null) throw new Error('childlessOfLeaves needs the child indexes');
  const { kids, owned, children, owners } = ix;
  const gone = goneSeqs instanceof Sql ? await seqsOf(db, sql`SELECT seq FROM ${goneSeqs}`) : ascendingCopy(goneSeqs);
  const kept = (q: unknown) => !sortedHas(gone, Number(q));
  // The rows whose parents are read here: every removed row, or those local settling left.
  const pg = sql`pg AS (SELECT unnest(${seqList(settled ? settled.parentsOf : Array.from(gone))}) AS seq)`;
  const links = [
    sql`SELECT hash(parent_id) AS ph, CASE WHEN has_children THEN hash(id) END AS ih
        FROM ${children.sql} WHERE seq IN (SELECT seq FROM pg) AND parent_id IS NOT NULL`,
  ];
  if (settled && settled.hashes.length > 0) links.push(sql`SELECT unnest(${hashList(settled.hashes)}) AS ph, NULL::UBIGINT AS ih`);
  // The parents asked about (seq null), and the rows under them that no delete before this one took.
  const under = [
    sql`SELECT h, NULL::BIGINT AS seq FROM ph`,
    sql`SELECT hash(parent_id) AS h, seq FROM ${children.sql} WHERE parent_id IS NOT NULL AND hash(parent_id) IN (SELECT h FROM ph)`,
  ];
  if (kids.length > 0) {
    // One parameter for the list, read twice.
    const index = files(kids);
    if (!settled || settled.parentsOf.length > 0)
      links.push(sql`SELECT ph, ih FROM ${index} WHERE seq IN (SELECT seq FROM pg) AND ph IS NOT NULL`);
    under.push(sql`SELECT ph AS h, seq FROM ${index} WHERE ph IN (SELECT h FROM ph) AND seq NOT IN ${snap.deadSeqs}`);
  }
  const gl = sql`gl AS (${union(links)})`;
  const ph = sql`ph AS (SELECT DISTINCT ph AS h FROM gl WHERE ph NOT IN (SELECT ih FROM gl WHERE ih IS NOT NULL))`;
  const rows = await db.all(sql`WITH ${pg}, ${gl}, ${ph} ${union(under)}`);
  const asked = new Set<bigint>();
  const keep = new Set<bigint>();
  for (const r of rows) {
    const h = r['h'] as bigint;
    if (r['seq'] === null) asked.add(h);
    else if (kept(r['seq'])) keep.add(h);
  }
  const u = [...asked].filter((h) => !keep.has(h));
  if (u.length === 0) return [];
  // The parents no live child is left under: found scans the owners for these few (a small table to
  // probe), where probing every owner's hash against all parents and all kept parents cost twice as much.
  const found = [sql`SELECT seq FROM ${owners.sql} WHERE has_children AND hash(id) IN (SELECT h FROM u)`];
  if (owned.length > 0)
    found.push(
      sql`SELECT seq FROM ${files(owned)} WHERE ih IN (SELECT h FROM u) AND seq NOT IN ${snap.deadSeqs} AND seq NOT IN ${snap.childlessSeqs}`,
    );
  const owners_ = await db.all(sql`WITH u AS (SELECT unnest(${hashList(u)}) AS h) ${union(found)}`);
  return owners_.map((r) => Number(r['seq'])).filter(kept);
}

/** A relation's seqs, ascending. */
async function seqsOf(db: SqlRunner, q: Sql): Promise<Float64Array> {
  const rows = await db.all(sql`SELECT seq::DOUBLE AS seq FROM (${q}) ORDER BY seq`);
  return Float64Array.from(rows, (r) => Number(r['seq']));
}

/** The seqs ascending: themselves when they are a Float64Array that ascends, else a sorted copy. */
function ascendingCopy(seqs: ArrayLike<number>): Float64Array {
  if (seqs instanceof Float64Array && ascending(seqs)) return seqs;
  const out = Float64Array.from(seqs);
  return ascending(out) ? out : out.sort();
}

export interface GoneRow {
  id: string;
  seq: number;
  parent_id: string | null;
}

/** The rows a delete removes: the matching records and all their descendants (each once). */
export async function rowsToDelete(db: SqlRunner, plan: PlanInput): Promise<GoneRow[]> {
  const row = (r: Record<string, unknown>): GoneRow => ({
    id: String(r['id']),
    seq: Number(r['seq']),
    parent_id: typeof r['parent_id'] === 'string' ? r['parent_id'] : null,
  });
  if (plan.level !== 'span') return (await db.all(deleteQuery(plan))).map(row);
  const hits = await db.all(deleteHitsQuery(plan));
  const out = hits.map(row);
  const parents = hits.filter((r) => r['has_children'] !== false).map((r) => String(r['id']));
  if (parents.length === 0) return out;
  const seen = new Set(out.map((r) => r.seq));
  for (const r of (await db.all(subtreeQuery(plan.descendants, parents))).map(row)) {
    if (seen.has(r.seq)) continue;
    seen.add(r.seq);
    out.push(r);
  }
  return out;
}

/**
 * Seqs of the live versions (spans or traces, has_children true) of `parents` that no live child span
 * outside `goneSeqs` is left under. Asked before the delete is logged, so both go in one entry.
 * Sealed rows are looked up in the segments' child indexes (hashes of parent_id and of owners' ids,
 * storage/child-index.ts), rows in memory as they are; without the indexes (retention on the scope,
 * a file missing), the segments' own columns are read.
 */
export async function childlessParents(
  db: SqlRunner,
  snap: Snapshot,
  scope: Scope,
  parents: string[],
  goneSeqs: number[],
): Promise<number[]> {
  const ix = indexedParts(snap, scope);
  if (ix === null) return childlessByScan(db, snap, scope, parents, goneSeqs);
  const { kids, owned, children, owners } = ix;
  const keep = [
    sql`SELECT hash(parent_id) AS h FROM ${children.sql} WHERE parent_id IN (SELECT id FROM pid) AND seq NOT IN (SELECT seq FROM g)`,
  ];
  const found = [
    sql`SELECT seq FROM ${owners.sql} WHERE id IN (SELECT id FROM pid) AND has_children AND hash(id) NOT IN (SELECT h FROM keep)`,
  ];
  const ctes = [
    sql`pid AS (SELECT unnest(${parents}::VARCHAR[]) AS id)`,
    sql`ph AS (SELECT DISTINCT hash(id) AS h FROM pid)`,
    sql`g AS (SELECT unnest(${seqList(goneSeqs)}) AS seq)`,
  ];
  if (kids.length > 0)
    keep.push(
      sql`SELECT ph FROM ${files(kids)} WHERE ph IN (SELECT h FROM ph) AND seq NOT IN (SELECT seq FROM g) AND seq NOT IN ${snap.deadSeqs}`,
    );
  if (owned.length > 0)
    found.push(
      sql`SELECT seq FROM ${files(owned)} WHERE ih IN (SELECT h FROM u) AND seq NOT IN ${snap.deadSeqs} AND seq NOT IN ${snap.childlessSeqs}`,
    );
  // As in childlessOfLeaves: the owners' hashes are probed against the parents no live child keeps.
  const settled = [
    sql`keep AS (SELECT DISTINCT h FROM (${union(keep)}))`,
    sql`u AS (SELECT h FROM ph WHERE h NOT IN (SELECT h FROM keep))`,
  ];
  const q = sql`WITH ${joinSql([...ctes, ...settled])} ${union(found)}`;
  return (await db.all(q)).map((r) => Number(r['seq']));
}

/** childlessParents over the segments' parent_id and id columns (what the child indexes stand for). */
export async function childlessByScan(
  db: SqlRunner,
  snap: Snapshot,
  scope: Scope,
  parents: string[],
  goneSeqs: number[],
): Promise<number[]> {
  const s: Scope = { ...scope, kinds: ['span'] };
  const children = snap.source(s);
  const owners = snap.source({ ...s, kinds: ['span', 'trace'] });
  // One parameter for the ids, read twice.
  const ids = sql`SELECT unnest(${parents}::VARCHAR[])`;
  // Semi- and anti-joins (hash) rather than list_contains, which compares every row with every listed id.
  const left = sql`SELECT parent_id FROM ${children.sql} WHERE parent_id IN (${ids}) AND seq NOT IN (SELECT unnest(${goneSeqs}::BIGINT[]))`;
  const rows = await db.all(sql`SELECT seq FROM ${owners.sql} WHERE id IN (${ids}) AND has_children AND id NOT IN (${left})`);
  return rows.map((r) => Number(r['seq']));
}
