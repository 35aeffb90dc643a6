// Record ids: kept when the client sends them, otherwise derived from the request's content and the
// record's position in it, so a retried request (same body) yields the same ids and replaces rather
// than duplicates. Two byte-identical requests without ids are therefore one request, by design.
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
