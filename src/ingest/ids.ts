// Record ids: kept when the client sends them, otherwise minted. Minted ids come from a seed and the
// record's position in the request: a fresh random seed for every request, so the same request sent
// twice is two sets of records, or a seed derived from the request's idempotency key, so a retry with
// that key mints the ids its first attempt did (even after a restart) and cannot log a second copy.
import { createHash, randomUUID } from 'node:crypto';

export function uuidFromHash(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  const b = h.digest();
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4 layout
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const x = b.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** The seed of a request's minted ids: from its idempotency key (scoped to project, run and route), else random. */
export function idSeed(key: string | null, ...scope: string[]): string {
  return key === null ? randomUUID() : uuidFromHash('idempotency', ...scope, key);
}

/** A digest of a value's JSON text (an idempotency key's request body, to recognise a retry). */
export function contentDigest(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? '')
    .digest('hex');
}

export function newId(): string {
  return randomUUID();
}

/** The implicit session of a trace logged without one. */
export function implicitSessionId(projectId: string, runId: string, traceId: string): string {
  return uuidFromHash('session', projectId, runId, traceId);
}
