// Timestamps are stored as microseconds since the epoch, UTC. A value without a zone is read as UTC
// (the official clients always send `Z`); digits past microseconds are dropped.
import { invalid } from '../errors.js';

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Parses an ISO 8601 date-time (or epoch milliseconds) into epoch microseconds; null when malformed. */
export function parseTimestampUs(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.round(value * 1000) : null;
  const m = ISO_RE.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 24 || Number(mi) > 59 || Number(s) > 60) return null;
  let us = ms * 1000 + Number((frac + '000000').slice(0, 6));
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    us -= sign * offsetMin * 60_000_000;
  }
  return us;
}

export function requireTimestampUs(value: string | number, loc: (string | number)[]): number {
  const us = parseTimestampUs(value);
  if (us === null) throw invalid(loc, 'Input should be a valid datetime (ISO 8601, e.g. 2026-01-31T12:00:00.000Z)', value, 'datetime_parsing');
  return us;
}

/** ISO 8601 in UTC: milliseconds when that is exact, else microseconds. */
export function formatTimestampUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString();
  const rest = us - ms * 1000;
  return rest === 0 ? iso : `${iso.slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

export function nowUs(): number {
  return Date.now() * 1000;
}
