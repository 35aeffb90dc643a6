// What a scorer reads from a record as text: input, output and the reference answer in whichever shape
// they were logged (a string, a message, a list of messages, documents, content parts, any JSON).

/** The text of a content value: a string, content parts (their text joined), or a message's content. */
function contentText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const texts = v.map((p) => (typeof p === 'string' ? p : p && typeof p === 'object' ? textPart(p as Record<string, unknown>) : null));
    if (texts.every((t) => t !== null)) return (texts as string[]).join('\n');
    return null;
  }
  return null;
}

function textPart(p: Record<string, unknown>): string | null {
  if (typeof p['text'] === 'string') return p['text'];
  if (typeof p['content'] === 'string') return p['content'];
  if (typeof p['page_content'] === 'string') return p['page_content'];
  return null;
}

function isMessage(v: unknown): v is { role?: unknown; content?: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'content' in v;
}

/**
 * A logged value as text: strings as they are; a message as its content; a list of messages as the
 * last user message (what was asked) when `ask`, else all contents joined; documents as their contents
 * joined; anything else as its JSON. Null and absent values have no text.
 */
export function asText(v: unknown, ask = false): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isMessage(v)) return contentText(v.content) ?? JSON.stringify(v.content);
  if (Array.isArray(v) && v.length > 0 && v.every(isMessage)) {
    if (ask) {
      const users = v.filter((m) => m.role === 'user');
      const last = users[users.length - 1];
      if (last) return contentText(last.content) ?? JSON.stringify(last.content);
    }
    return v.map((m) => contentText(m.content) ?? JSON.stringify(m.content)).join('\n');
  }
  const parts = contentText(v);
  if (parts !== null) return parts;
  return JSON.stringify(v);
}

/** Lower-case word and punctuation tokens (BLEU): runs of letters or digits, and each other non-space character. */
export function wordTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) ?? [];
}

/** Lower-case word tokens only (ROUGE): runs of letters or digits. */
export function plainTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
