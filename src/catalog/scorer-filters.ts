// The filters of POST /scorers/list, as the hosted service defines them, each compiled once into a
// row predicate.
// Operator semantics are those of list-match.ts. Decisions specific to scorers:
// - name: case-insensitive unless case_sensitive is true (the service's default is false); tags, labels, node
//   types and capabilities are case-sensitive unless case_sensitive is false.
// - label with strict false compares loosely: case, accents, spacing and punctuation (_ - . /)
//   are ignored on both sides, so "context adherence" finds "Context-Adherence". strict true (the
//   default) compares the label as written (honouring case_sensitive).
// - multimodal_capabilities: a scorer without capabilities counts as having the filter-only value
//   `text`, so `one_of ["text", "vision"]` finds text-only and vision scorers, and `contains "text"`
//   finds text-only ones.
// - creator contains: a substring of the creator's id or email.
// - scope_projects: scorers scoped to any listed project, plus global ones with include_global.
// - exclude_slm_scorers keeps scorers whose model_type is null; exclude_multimodal_scorers drops
//   scorers with any capability.
import { invalid } from '../errors.js';
import type { ScorerFilter } from '../schemas/scorers.js';
import { boolMatcher, caseFold, collectionMatcher, dateMatcher, enumMatcher, idMatcher, textMatcher, type Loc } from './list-match.js';
import type { ScorerRow } from './scorer-row.js';

export const SCORER_FILTER_NAMES = [
  'name',
  'scorer_type',
  'model_type',
  'tags',
  'creator',
  'created_at',
  'updated_at',
  'label',
  'scoreable_node_types',
  'multimodal_capabilities',
  'id',
  'is_global',
  'scope_projects',
  'exclude_slm_scorers',
  'exclude_multimodal_scorers',
] as const satisfies readonly ScorerFilter['name'][];

export type Predicate = (row: ScorerRow) => boolean;

/** Folds a label for strict=false matching. */
export function looseLabel(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export function scorerPredicate(filters: readonly ScorerFilter[], loc: Loc, emailOf: (userId: string | null) => string | null): Predicate {
  const preds = filters.map((f, i) => compile(f, [...loc, i], emailOf));
  return (row) => {
    for (const p of preds) if (!p(row)) return false;
    return true;
  };
}

function compile(f: ScorerFilter, at: Loc, emailOf: (userId: string | null) => string | null): Predicate {
  switch (f.name) {
    case 'name': {
      const m = textMatcher(f.operator, f.value, caseFold(f.case_sensitive, false), at);
      return (r) => m(r.name);
    }
    case 'scorer_type': {
      const m = enumMatcher(f.operator, f.value, at);
      return (r) => m(r.scorer_type);
    }
    case 'model_type': {
      const m = enumMatcher(f.operator, f.value, at);
      return (r) => m(r.model_type);
    }
    case 'tags': {
      const m = collectionMatcher(f.operator, f.value, caseFold(f.case_sensitive, true), at);
      return (r) => m(r.tags);
    }
    case 'creator': {
      const m = idMatcher(f.operator, f.value, at);
      return (r) => m(r.created_by, emailOf(r.created_by));
    }
    case 'created_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (r) => m(r.created_at);
    }
    case 'updated_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (r) => m(r.updated_at);
    }
    case 'label': {
      const m = textMatcher(f.operator, f.value, f.strict === false ? looseLabel : caseFold(f.case_sensitive, true), at);
      return (r) => m(r.label);
    }
    case 'scoreable_node_types': {
      const m = collectionMatcher(f.operator, f.value, caseFold(f.case_sensitive, true), at);
      return (r) => m(r.scoreable_node_types);
    }
    case 'multimodal_capabilities': {
      const m = collectionMatcher(f.operator, f.value, caseFold(f.case_sensitive, true), at);
      const textOnly = ['text'];
      return (r) => m(r.multimodal_capabilities?.length ? r.multimodal_capabilities : textOnly);
    }
    case 'id': {
      const m = idMatcher(f.operator, f.value, at);
      return (r) => m(r.id);
    }
    case 'is_global': {
      const m = boolMatcher(f.operator, f.value, at);
      return (r) => m(r.is_global);
    }
    case 'scope_projects': {
      const ids = f.project_ids;
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > 1000) {
        throw invalid(
          [...at, 'project_ids'],
          'give between 1 and 1000 project ids',
          undefined,
          Array.isArray(ids) && ids.length > 1000 ? 'too_long' : 'too_short',
        );
      }
      const wanted = new Set(ids.map((id) => id.toLowerCase()));
      const withGlobal = f.include_global === true;
      return (r) => (withGlobal && r.is_global) || r.scope_project_ids.some((p) => wanted.has(p));
    }
    case 'exclude_slm_scorers':
      return (r) => r.model_type !== 'slm';
    case 'exclude_multimodal_scorers':
      return (r) => !r.multimodal_capabilities?.length;
    default: {
      const unknown: never = f;
      const name = (unknown as { name?: unknown }).name;
      throw invalid(
        [...at, 'name'],
        `Input should be one of ${SCORER_FILTER_NAMES.map((n) => `'${n}'`).join(', ')} (unknown scorer filter)`,
        name,
        'union_tag_invalid',
      );
    }
  }
}
