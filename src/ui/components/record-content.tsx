// A record's input and output as a reader wants them: llm messages as a conversation (role,
// text, tool calls), retriever documents as numbered cards with their metadata, anything else as
// text (JSON pretty-printed). Always text nodes.
import { asDocuments, asMessages, asText, type Doc, type Message } from '../lib/format.js';
import { CopyButton, TextBlock } from './common.js';

export function MessageCard({ m, response = false }: { m: Message; response?: boolean }) {
  const copy = m.text || m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
  return (
    <article class={`msg role-${m.role.replace(/[^a-z]/g, '')}${response ? ' response' : ''}`} aria-label={`${m.role} message`}>
      <header>
        <span class="role">{m.role}</span>
        {m.toolCallId && <span class="muted">for call {m.toolCallId}</span>}
        {response && <span class="muted">response</span>}
        <span class="grow" />
        {copy && <CopyButton text={copy} label={`Copy ${m.role} message`} />}
      </header>
      {m.text !== '' && <pre class="text">{m.text}</pre>}
      {m.toolCalls.map((c, i) => (
        <div class="tool-call" key={i}>
          <div>
            <span class="muted">calls</span> <code>{c.name || '(tool)'}</code> {c.id && <span class="muted">{c.id}</span>}
          </div>
          <pre class="text">{asText(c.arguments)}</pre>
        </div>
      ))}
    </article>
  );
}

export function Conversation({ messages, response }: { messages: Message[]; response?: Message[] | null }) {
  return (
    <div class="conversation">
      {messages.map((m, i) => (
        <MessageCard key={i} m={m} />
      ))}
      {response?.map((m, i) => (
        <MessageCard key={`r${i}`} m={m} response />
      ))}
    </div>
  );
}

export function Documents({ docs }: { docs: Doc[] }) {
  return (
    <ol class="documents">
      {docs.map((d, i) => (
        <li key={i} class="doc">
          <header>
            <span class="role">Document {i + 1}</span>
            <span class="grow" />
            <CopyButton text={d.text} label={`Copy document ${i + 1}`} />
          </header>
          <pre class="text">{d.text}</pre>
          {d.metadata && Object.keys(d.metadata).length > 0 && <KeyValues values={d.metadata} />}
        </li>
      ))}
    </ol>
  );
}

export function KeyValues({ values }: { values: Record<string, unknown> }) {
  const entries = Object.entries(values);
  if (entries.length === 0) return <p class="muted">None.</p>;
  return (
    <table class="kv">
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>
              <span class="kv-value">{typeof v === 'string' ? v : JSON.stringify(v)}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One side (input or output) of a record, in the best shape its value allows. */
export function ValueView({ value, label }: { value: unknown; label: string }) {
  const msgs = asMessages(value);
  if (msgs) return <Conversation messages={msgs} />;
  const docs = asDocuments(value);
  if (docs) return <Documents docs={docs} />;
  return <TextBlock text={asText(value)} label={label} />;
}
