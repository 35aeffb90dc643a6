// Timestamps are stored as microseconds since the epoch, UTC. A value without a zone is read as UTC
// (the official clients always send `Z`); digits past microseconds are dropped.
import { invalid } from '../errors.js';

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Digits at positions [from, to) of s as a number, or -1 if any is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** Fast path for what the official clients send: 2026-01-31T12:00:00.123Z (exactly 24 characters). */
function parseCanonical(v: string): number | null {
  if (
    v.charCodeAt(4) !== 45 ||
    v.charCodeAt(7) !== 45 ||
    v.charCodeAt(10) !== 84 ||
    v.charCodeAt(13) !== 58 ||
    v.charCodeAt(16) !== 58 ||
    v.charCodeAt(19) !== 46 ||
    v.charCodeAt(23) !== 90
  )
    return null;
  const y = digits(v, 0, 4),
    mo = digits(v, 5, 7),
    d = digits(v, 8, 10),
    h = digits(v, 11, 13),
    mi = digits(v, 14, 16),
    s = digits(v, 17, 19),
    ms = digits(v, 20, 23);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0) return null;
  return Date.UTC(y, mo - 1, d, h, mi, s, ms) * 1000;
}

/** Parses an ISO 8601 date-time (or epoch milliseconds) into epoch microseconds; null when malformed. */
export function parseTimestampUs(value: string | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.round(value * 1000) : null;
  if (value.length === 24) {
    const us = parseCanonical(value);
    if (us !== null) return us;
  }
  const m = ISO_RE.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 24 || Number(mi) > 59 || Number(s) > 60) return null;
  let us = ms * 1000 + Number(`${frac}000000`.slice(0, 6));
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
  if (us === null)
    throw invalid(loc, 'Input should be a valid datetime (ISO 8601, e.g. 2026-01-31T12:00:00.000Z)', value, 'datetime_parsing');
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
