// Numbers, times and record content as short text for cells and headers, and the shapes of llm
// messages and retriever documents (DOM-free: unit-tested under Node). Nothing here produces
// markup: every value ends up as a text node.
import type { RecordRow } from './types.js';

export function formatDuration(ns: number | null | undefined): string {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '';
  const ms = ns / 1e6;
  if (ms < 1) return `${Math.round(ns / 1e3)} µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(2) : s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  if (whole < 86_400) return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
  return `${Math.floor(whole / 86_400)} d ${Math.floor((whole % 86_400) / 3600)} h`;
}

const integer = new Intl.NumberFormat('en-US');

export function formatNumber(v: unknown): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return v === null || v === undefined ? '' : String(v);
  if (Number.isInteger(v)) return integer.format(v);
  const abs = Math.abs(v);
  return abs >= 100 ? v.toFixed(1) : abs >= 1 ? v.toFixed(2) : v.toPrecision(3).replace(/0+$/, '').replace(/\.$/, '');
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Local date and time to the second: 2026-01-01 10:00:15. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export interface Message {
  role: string;
  text: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  toolCallId: string | null;
}

/** Text of a message's content: a string, or content parts ({type:'text', text} / {type:'file', file_id}). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        const part = p as Record<string, unknown>;
        if (typeof part?.['text'] === 'string') return part['text'];
        if (part?.['type'] === 'file') return `[file ${String(part['file_id'] ?? '')}]`;
        return typeof p === 'string' ? p : JSON.stringify(p);
      })
      .join('\n');
  }
  if (content === null || content === undefined) return '';
  return JSON.stringify(content, null, 2);
}

function isMessage(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as Record<string, unknown>)['role'] === 'string';
}

function toMessage(m: Record<string, unknown>): Message {
  const calls = Array.isArray(m['tool_calls']) ? (m['tool_calls'] as Record<string, unknown>[]) : [];
  return {
    role: String(m['role']),
    text: contentText(m['content']),
    toolCalls: calls.map((c) => {
      const fn = (c?.['function'] ?? {}) as Record<string, unknown>;
      const args = fn['arguments'];
      return {
        id: String(c?.['id'] ?? ''),
        name: String(fn['name'] ?? ''),
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? ''),
      };
    }),
    toolCallId: typeof m['tool_call_id'] === 'string' ? m['tool_call_id'] : null,
  };
}

/** Messages, when the value is one message or a list of them; null otherwise. */
export function asMessages(v: unknown): Message[] | null {
  if (isMessage(v)) return [toMessage(v)];
  if (Array.isArray(v) && v.length > 0 && v.every(isMessage)) return v.map(toMessage);
  return null;
}

export interface Doc {
  text: string;
  metadata: Record<string, unknown> | null;
}

/** Retriever documents ({content} or {page_content}, with metadata); null when the value is not a list of them. */
export function asDocuments(v: unknown): Doc[] | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  const docs: Doc[] = [];
  for (const d of v) {
    if (d === null || typeof d !== 'object') return null;
    const o = d as Record<string, unknown>;
    const text = o['content'] ?? o['page_content'];
    if (text === undefined) return null;
    const meta = o['metadata'];
    docs.push({ text: contentText(text), metadata: meta && typeof meta === 'object' ? (meta as Record<string, unknown>) : null });
  }
  return docs;
}

/** Any value as readable text: strings as they are, JSON in a string pretty-printed, the rest as JSON. */
export function asText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') {
    const t = v.trim();
    if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        return v;
      }
    }
    return v;
  }
  return JSON.stringify(v, null, 2);
}

/** A one-line preview for a table cell: the last message of a conversation, or the text, squeezed. */
export function preview(v: unknown, max = 200): string {
  const msgs = asMessages(v);
  let s: string;
  if (msgs) {
    const last = msgs[msgs.length - 1]!;
    s = `${last.role}: ${last.text || last.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ')}`;
  } else {
    const docs = asDocuments(v);
    s = docs
      ? `${docs.length} document${docs.length === 1 ? '' : 's'}: ${docs[0]!.text}`
      : typeof v === 'string'
        ? v
        : v === null || v === undefined
          ? ''
          : JSON.stringify(v);
  }
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A metric's value on a record: its own, else the roll-up of its descendants. */
export function metricValue(r: RecordRow, name: string): { value: number | null; rollUp: string | null } {
  const own = r.metrics?.[name];
  if (typeof own === 'number') return { value: own, rollUp: null };
  const info = r.metric_info?.[name];
  if (info && typeof info.value === 'number')
    return { value: info.value, rollUp: info.status_type === 'roll_up' ? (info.roll_up_method ?? 'roll-up') : null };
  return { value: null, rollUp: null };
}

/** Whether a record failed: an HTTP-like status of 400 or more, or an error message. */
export function isError(r: Pick<RecordRow, 'status_code' | 'error_message'>): boolean {
  return (typeof r.status_code === 'number' && r.status_code >= 400) || (typeof r.error_message === 'string' && r.error_message !== '');
}
