// Whole queries over one level of the tree (spans, traces or sessions): a page, a count, the rows a
// delete removes. The planner composes the record source (segments + in-memory batch, given by the
// engine as SQL with its parameters), the compiled filter, the sort, and the metric roll-ups that
// filters and sorts need. Pure and synchronous: returns {sql, params}; never runs anything.
import type { Param } from '../db/database.js';
import { InvalidRequestError, invalid } from '../errors.js';
import { resolveColumn, suggestColumn, type ColumnDef, type Level, type MetricInfo, type RollUpMethod } from './columns.js';
import { compileFilter } from './compile-filter.js';
import { metricsOf, type Expr } from './filter-ast.js';
import { Params } from './params.js';

export interface Source {
  readonly sql: string;
  readonly params: readonly Param[];
}

export interface SortSpec {
  readonly column: ColumnDef;
  readonly ascending: boolean;
}

export interface PlanInput {
  readonly level: Level;
  /** Records of the level, already scoped to the project/run, live rows only. */
  readonly base: (firstParam: number) => Source;
  /** Descendant records (spans for spans and traces; spans and traces for sessions), for roll-ups. */
  readonly descendants: (firstParam: number) => Source;
  readonly filter: Expr | null;
  readonly sort: SortSpec | null;
  readonly rollUp: (metric: string) => RollUpMethod;
}

export const AGGREGATE: Record<RollUpMethod, (v: string) => string> = {
  average: (v) => `avg(${v})`,
  sum: (v) => `sum(${v})`,
  max: (v) => `max(${v})`,
  min: (v) => `min(${v})`,
  percentage_true: (v) => `avg(CASE WHEN ${v} <> 0 THEN 1.0 ELSE 0.0 END)`,
  percentage_false: (v) => `avg(CASE WHEN ${v} = 0 THEN 1.0 ELSE 0.0 END)`,
};

interface Skeleton {
  ctes: string[];
  recursive: boolean;
  fromSql: string;
  whereSql: string;
  orderSql: string;
}

function withClause(ctes: readonly string[], recursive: boolean): string {
  return ctes.length > 0 ? `WITH ${recursive ? 'RECURSIVE ' : ''}${ctes.join(', ')} ` : '';
}

/** The shared skeleton: CTEs (roll-ups), FROM with roll-up joins, WHERE, and ORDER BY. */
function skeleton(input: PlanInput, params: Params): Skeleton {
  const base = input.base(params.values.length + 1);
  params.values.push(...base.params);
  const needed = metricsOf(input.filter);
  if (input.sort?.column.metric !== undefined) needed.add(input.sort.column.metric);
  const ctes: string[] = [];
  const joins: string[] = [];
  const metricSql = new Map<string, string>();
  let recursive = false;
  if (needed.size > 0) {
    const d = input.descendants(params.values.length + 1);
    params.values.push(...d.params);
    ctes.push(`d AS (SELECT id, parent_id, trace_id, session_id, metrics FROM ${d.sql})`);
    let i = 0;
    for (const name of needed) {
      const key = params.add(name);
      const agg = AGGREGATE[input.rollUp(name)];
      if (input.level === 'span') {
        // Every own value climbs to each span ancestor (a span's parent is a span unless it is the trace).
        recursive = true;
        ctes.push(
          `up${i}(anc, v) AS (SELECT d.parent_id, d.metrics[${key}] FROM d WHERE d.metrics[${key}] IS NOT NULL AND d.parent_id <> d.trace_id` +
            ` UNION ALL SELECT p.parent_id, up${i}.v FROM up${i} JOIN d p ON p.id = up${i}.anc WHERE p.parent_id <> p.trace_id)`,
        );
        ctes.push(`ru${i} AS (SELECT anc AS id, ${agg('v')} AS v FROM up${i} GROUP BY anc)`);
      } else {
        const group = input.level === 'trace' ? 'd.trace_id' : 'd.session_id';
        ctes.push(`ru${i} AS (SELECT ${group} AS id, ${agg(`d.metrics[${key}]`)} AS v FROM d WHERE d.metrics[${key}] IS NOT NULL GROUP BY ${group})`);
      }
      joins.push(`LEFT JOIN ru${i} ON ru${i}.id = r.id`);
      metricSql.set(name, `coalesce(r.metrics[${key}], ru${i}.v)`);
      i++;
    }
  }
  const ctx = { params, metric: (name: string) => metricSql.get(name) ?? `r.metrics[${params.add(name)}]` };
  const whereSql = input.filter ? compileFilter(input.filter, ctx) : 'true';
  let orderSql = 'r.created_at DESC, r.id DESC';
  if (input.sort) {
    const dir = input.sort.ascending ? 'ASC' : 'DESC';
    const expr = input.sort.column.metric !== undefined ? ctx.metric(input.sort.column.metric) : input.sort.column.sql;
    orderSql = `${expr} ${dir} NULLS LAST, r.id ${dir}`;
  }
  return { ctes, recursive, fromSql: `${base.sql} r${joins.length ? ` ${joins.join(' ')}` : ''}`, whereSql, orderSql };
}

/** One page of records (all stored columns, timestamps as epoch µs); asks for limit+1 to know if more exist. */
export function pageQuery(input: PlanInput, columns: readonly string[] | '*', limit: number, offset: number): { sql: string; params: Param[] } {
  const params = new Params();
  const s = skeleton(input, params);
  const select =
    columns === '*'
      ? 'r.* REPLACE (epoch_us(r.created_at) AS created_at, epoch_us(r.updated_at) AS updated_at)'
      : columns.map((c) => (c === 'created_at' || c === 'updated_at' ? `epoch_us(r.${c}) AS ${c}` : `r.${c}`)).join(', ');
  const sql = `${withClause(s.ctes, s.recursive)}SELECT ${select} FROM ${s.fromSql} WHERE ${s.whereSql} ORDER BY ${s.orderSql} LIMIT ${params.add(limit + 1)} OFFSET ${params.add(offset)}`;
  return { sql, params: params.values };
}

export function countQuery(input: PlanInput): { sql: string; params: Param[] } {
  const params = new Params();
  const s = skeleton({ ...input, sort: null }, params);
  return { sql: `${withClause(s.ctes, s.recursive)}SELECT count(*) AS n FROM ${s.fromSql} WHERE ${s.whereSql}`, params: params.values };
}

/**
 * Everything a delete removes: the matching records and all their descendants (a span's subtree; a
 * trace's spans; a session's traces and spans), with the parent of each removed record.
 */
export function deleteQuery(input: PlanInput): { sql: string; params: Param[] } {
  const params = new Params();
  const s = skeleton({ ...input, sort: null }, params);
  const d = input.descendants(params.values.length + 1);
  params.values.push(...d.params);
  const ctes = [...s.ctes, `hit AS (SELECT r.id, r.seq, r.parent_id FROM ${s.fromSql} WHERE ${s.whereSql})`, `s AS (SELECT id, seq, parent_id, trace_id, session_id FROM ${d.sql})`];
  let tail: string;
  if (input.level === 'span') {
    ctes.push('sub(id, seq, parent_id) AS (SELECT id, seq, parent_id FROM hit UNION SELECT s.id, s.seq, s.parent_id FROM sub JOIN s ON s.parent_id = sub.id)');
    tail = 'SELECT id, seq, parent_id FROM sub';
  } else {
    const link = input.level === 'trace' ? 's.trace_id' : 's.session_id';
    tail = `SELECT id, seq, parent_id FROM hit UNION ALL SELECT s.id, s.seq, s.parent_id FROM s WHERE ${link} IN (SELECT id FROM hit)`;
  }
  return { sql: `${withClause(ctes, true)}${tail}`, params: params.values };
}

/** Validates the sort clause (column_id or name; ascending defaults to true). Null means the default order. */
export function validateSort(sort: { column_id?: string | null; name?: string | null; ascending?: boolean | null; sort_type?: string | null } | null | undefined, level: Level, metrics?: (n: string) => MetricInfo | undefined): SortSpec | null {
  if (!sort) return null;
  const id = sort.column_id ?? sort.name;
  const field = sort.column_id != null ? 'column_id' : 'name';
  if (id == null) throw invalid(['body', 'sort', 'column_id'], 'Field required: the column to sort by', undefined, 'missing');
  if (sort.sort_type != null && sort.sort_type !== 'column') throw invalid(['body', 'sort', 'sort_type'], "Input should be 'column'", sort.sort_type, 'literal_error');
  const column = resolveColumn(id, level, metrics);
  if (!column) {
    const hint = suggestColumn(id, level);
    throw invalid(['body', 'sort', field], `unknown column "${id}" for ${level}s${hint ? `; did you mean "${hint}"?` : ''}`, id);
  }
  if (!column.sortable) throw invalid(['body', 'sort', field], `column ${column.id} cannot be sorted (it holds several values)`, id);
  return { column, ascending: sort.ascending ?? true };
}

export { InvalidRequestError };
