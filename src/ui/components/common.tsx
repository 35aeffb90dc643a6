// Small shared pieces: copy buttons, badges, long text, errors, breadcrumbs. Every piece of trace
// content is passed to Preact as a string child, which becomes a text node: never markup.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Link } from '../lib/router.js';
import type { Route } from '../lib/routes.js';

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Without clipboard permission: the old selection-based copy.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

export function CopyButton({ text, label = 'Copy', visible = 'Copy' }: { text: string; label?: string; visible?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="copy"
      aria-label={label}
      title={label}
      onClick={(e) => {
        // A copy must not also select the row or close the panel around it.
        e.stopPropagation();
        void copyText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1200);
        });
      }}
    >
      {done ? 'Copied' : visible}
    </button>
  );
}

export function KindBadge({ kind }: { kind: string }) {
  return <span class={`kind kind-${kind.replace(/[^a-z_]/g, '')}`}>{kind}</span>;
}

export function StatusBadge({ code, error }: { code: number | null | undefined; error: boolean }) {
  if (error) return <span class="status status-error">{typeof code === 'number' ? `error ${code}` : 'error'}</span>;
  return <span class="status status-ok">{typeof code === 'number' ? String(code) : 'ok'}</span>;
}

export function Tags({ tags }: { tags: unknown }) {
  if (!Array.isArray(tags) || tags.length === 0) return null;
  return (
    <span class="tags">
      {tags.map((t, i) => (
        <span class="tag" key={i}>
          {String(t)}
        </span>
      ))}
    </span>
  );
}

const LONG = 20_000;

/** Text in a <pre>, shortened past 20,000 characters until asked, with a copy button. */
export function TextBlock({ text, label, copy = true }: { text: string; label?: string; copy?: boolean }) {
  const [all, setAll] = useState(false);
  const shown = all || text.length <= LONG ? text : `${text.slice(0, LONG)}…`;
  return (
    <div class="text-block">
      {copy && text !== '' && <CopyButton text={text} label={label ? `Copy ${label}` : 'Copy'} />}
      <pre class="text">{shown === '' ? <span class="muted">(empty)</span> : shown}</pre>
      {!all && text.length > LONG && (
        <button type="button" class="link" onClick={() => setAll(true)}>
          Show all {text.length.toLocaleString('en-US')} characters
        </button>
      )}
    </div>
  );
}

export function ErrorNote({ error, children }: { error: Error | null; children?: ComponentChildren }) {
  if (!error) return null;
  return (
    <div class="error-note" role="alert">
      {error.message}
      {children}
    </div>
  );
}

export interface Crumb {
  label: string;
  to?: Route;
}

export function Breadcrumbs({ items }: { items: Crumb[] }) {
  return (
    <nav class="crumbs" aria-label="Breadcrumb">
      {items.map((c, i) => (
        <span key={i}>
          {i > 0 && <span class="sep">/</span>}
          {c.to ? <Link to={c.to}>{c.label}</Link> : <span aria-current="page">{c.label}</span>}
        </span>
      ))}
    </nav>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}
