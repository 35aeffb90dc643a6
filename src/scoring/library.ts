// Code scorers the library defines in-process (store.scorers.define): JavaScript functions, held in
// memory by the process that defined them and registered in the catalog under their name, so the API
// lists them and runs can enable them. A function's fingerprint (its source text and settings) names
// its version: defining the same name with another function makes a new version.
import { createHash } from 'node:crypto';
import { invalid } from '../errors.js';
import { ROLL_UP_METHODS, type RollUpMethod } from '../query/columns.js';
import { outcomeOf, type Outcome, type Runner, type ScorableRecord } from './outcome.js';

export type ScoreAnswer = number | boolean | { value: number | boolean; explanation?: string } | null | undefined;

export interface ScorerDefinition {
  /** The scorer's name, which is also the metric it writes (unique among scorers, ignoring case). */
  name: string;
  /** Record types it scores: llm (default), tool, retriever, agent, workflow, control, trace, session. */
  scoreableNodeTypes?: string[];
  /** The score of one record: a number, a boolean (1/0), or { value, explanation }; null or undefined when it does not apply. */
  score(record: ScorableRecord): ScoreAnswer | Promise<ScoreAnswer>;
  /** How the metric rolls up to parents, traces and sessions (default average). */
  aggregate?: RollUpMethod;
  description?: string;
  /** What the numbers are (default percentage: a fraction 0-1). */
  outputType?: 'percentage' | 'boolean' | 'count' | 'discrete';
}

const TYPES = ['llm', 'tool', 'retriever', 'agent', 'workflow', 'control', 'trace', 'session'];

/** Checks a definition (422-style errors naming the field). */
export function checkDefinition(def: ScorerDefinition): void {
  if (typeof def !== 'object' || def === null) throw invalid([], 'Input should be a scorer definition object', def);
  if (typeof def.name !== 'string' || def.name.trim() === '') throw invalid(['name'], 'Input should be a non-empty name', def.name);
  if (typeof def.score !== 'function') throw invalid(['score'], 'Input should be a function (record) => number', typeof def.score);
  const types = def.scoreableNodeTypes;
  if (types !== undefined) {
    if (!Array.isArray(types) || types.length === 0)
      throw invalid(['scoreableNodeTypes'], 'Input should be a non-empty list of record types', types);
    types.forEach((t, i) => {
      if (!TYPES.includes(t)) throw invalid(['scoreableNodeTypes', i], `Input should be one of ${TYPES.join(', ')}`, t);
    });
  }
  if (def.aggregate !== undefined && !(ROLL_UP_METHODS as readonly string[]).includes(def.aggregate))
    throw invalid(['aggregate'], `Input should be one of ${ROLL_UP_METHODS.join(', ')}`, def.aggregate);
  if (def.outputType !== undefined && !['percentage', 'boolean', 'count', 'discrete'].includes(def.outputType))
    throw invalid(['outputType'], 'Input should be one of percentage, boolean, count, discrete', def.outputType);
}

export function fingerprintOf(def: ScorerDefinition): string {
  return createHash('sha256')
    .update(JSON.stringify([def.score.toString(), def.scoreableNodeTypes ?? ['llm'], def.outputType ?? null]))
    .digest('hex')
    .slice(0, 32);
}

/** The runner of a defined function: each record scored on its own; a throw is that record's failure. */
export function libraryRunner(score: ScorerDefinition['score']): Runner {
  return async (records) =>
    Promise.all(
      records.map(async (r): Promise<Outcome> => {
        try {
          return outcomeOf(await score(Object.freeze({ ...r })));
        } catch (err) {
          return { status: 'failed', message: `the scorer threw: ${(err as Error)?.message ?? String(err)}` };
        }
      }),
    );
}
