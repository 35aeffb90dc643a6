// A count of one level's matching records: plan the request, then the first strategy that applies
// answers: the segments' token indexes (token-count.ts), kept per-segment counts (count-cache.ts), or
// one count query over every record (the plan as written).
import type { Level } from '../columns.js';
import { countQuery } from '../plan.js';
import type { FilterRequest } from '../../schemas/query.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { countBySegment } from './count-cache.js';
import type { ExecContext } from './exec-context.js';
import { factPlan, KINDS, scopeOf, type RunScope } from './plan-input.js';
import { countByTokens } from './token-count.js';

export async function count(cx: ExecContext, snap: Snapshot, level: Level, scope: RunScope, body: FilterRequest): Promise<number> {
  const plan = await factPlan(cx, snap, 'count', level, scope, body);
  const where = scopeOf(scope, KINDS[level]);
  const steps: string[] = [];
  const byTokens = cx.tokenCounts ? await countByTokens(cx.db, snap, where, plan, steps) : null;
  if (byTokens !== null) {
    cx.onPlan?.(steps);
    return byTokens;
  }
  const kept = cx.counts && (await countBySegment(cx.db, cx.counts, snap, where, plan, steps));
  if (kept !== null) {
    cx.onPlan?.(steps);
    return kept;
  }
  const q = countQuery(plan);
  cx.onPlan?.([`count${q.rolled.length > 0 ? ` + roll-up of ${q.rolled.join(', ')}` : ''}`]);
  return Number((await cx.db.all(q.sql))[0]!['n']);
}
