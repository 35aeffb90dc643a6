// A builder for filter_tree: groups that match all (and) or any (or) of their conditions, negated
// with "not", nested as deep as wanted; each condition offers its column's operators (by the
// filter_type available_columns reports) and a value input fit for the type.
import { useMemo, useState } from 'preact/hooks';
import {
  filterTypeOf,
  fromFilterTree,
  LIST_OPERATORS,
  newCond,
  newGroup,
  operatorsFor,
  scaleOf,
  toFilterTree,
  type Cond,
  type FilterTree,
  type Group,
} from '../lib/filters.js';
import { columnLabel } from '../lib/table-columns.js';
import type { ColumnInfo } from '../lib/types.js';

interface Props {
  columns: ColumnInfo[];
  tree: unknown;
  onApply: (tree: FilterTree | null) => void;
  onClose: () => void;
}

type Node = Cond | Group;

/** A copy of `root` with the node keyed `key` replaced by `fn(node)` (or removed when fn returns null). */
function edit(root: Group, key: number, fn: (n: Node) => Node | null): Group {
  const walk = (g: Group): Group => ({
    ...g,
    children: g.children.flatMap((c) => {
      if (c.key === key) {
        const r = fn(c);
        return r ? [r] : [];
      }
      return c.kind === 'group' ? [walk(c)] : [c];
    }),
  });
  return root.key === key ? (fn(root) as Group) : walk(root);
}

export function FilterBuilder({ columns, tree, onApply, onClose }: Props) {
  const filterable = useMemo(() => columns.filter((c) => c.filterable !== false && c.filter_type !== 'fully_annotated'), [columns]);
  const byId = useMemo(() => new Map(columns.map((c) => [c.id, c])), [columns]);
  const [root, setRoot] = useState<Group>(() => {
    const g = fromFilterTree(tree, byId);
    if (g.children.length === 0 && filterable[0]) g.children.push(newCond(filterable.find((c) => c.id === 'name') ?? filterable[0]));
    return g;
  });
  const [errors, setErrors] = useState<string[]>([]);
  const update = (key: number, fn: (n: Node) => Node | null) => setRoot((r) => edit(r, key, fn));
  const apply = (e: Event) => {
    e.preventDefault();
    const built = toFilterTree(root, byId);
    setErrors(built.errors);
    if (built.errors.length === 0) onApply(built.tree);
  };

  const condition = (c: Cond) => {
    const info = byId.get(c.column);
    const type = filterTypeOf(info);
    const ops = operatorsFor(info);
    const unit = scaleOf(info) === 1e6 ? ' (ms)' : '';
    const valueInput = (which: 'value' | 'value2', label: string) => {
      const v = c[which];
      const set = (value: string) => update(c.key, (n) => ({ ...(n as Cond), [which]: value }));
      if (type === 'boolean') {
        return (
          <select aria-label={label} value={v} onChange={(e) => set(e.currentTarget.value)}>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        );
      }
      if (info?.allowed_values?.length && !LIST_OPERATORS.has(c.operator) && c.operator !== 'contains') {
        return (
          <select aria-label={label} value={v} onChange={(e) => set(e.currentTarget.value)}>
            <option value="">choose…</option>
            {info.allowed_values.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        );
      }
      const inputType = type === 'number' ? 'number' : type === 'date' ? 'datetime-local' : 'text';
      const placeholder = LIST_OPERATORS.has(c.operator) ? 'a, b, c' : type === 'number' ? `number${unit}` : 'value';
      return (
        <input
          aria-label={label}
          type={inputType as 'text'}
          step={type === 'date' ? '0.001' : 'any'}
          placeholder={placeholder}
          value={v}
          onInput={(e) => set(e.currentTarget.value)}
        />
      );
    };
    return (
      <li class="cond" key={c.key}>
        <select
          aria-label="Column"
          value={c.column}
          onChange={(e) => {
            const next = byId.get(e.currentTarget.value);
            if (next) update(c.key, () => ({ ...newCond(next), key: c.key }));
          }}
        >
          {filterable.map((col) => (
            <option key={col.id} value={col.id}>
              {columnLabel(col, col.id)}
              {scaleOf(col) === 1e6 ? ' (ms)' : ''}
            </option>
          ))}
        </select>
        <select
          aria-label="Operator"
          value={c.operator}
          onChange={(e) => update(c.key, (n) => ({ ...(n as Cond), operator: e.currentTarget.value }))}
        >
          {ops.map((o) => (
            <option key={o.op} value={o.op}>
              {o.label}
            </option>
          ))}
        </select>
        {valueInput('value', 'Value')}
        {c.operator === 'between' && (
          <>
            <span class="muted">and</span>
            {valueInput('value2', 'Upper value')}
          </>
        )}
        {(type === 'text' || type === 'collection') && (
          <label class="check" title="Match upper and lower case exactly">
            <input
              type="checkbox"
              checked={c.caseSensitive}
              onChange={(e) => update(c.key, (n) => ({ ...(n as Cond), caseSensitive: e.currentTarget.checked }))}
            />
            Aa
          </label>
        )}
        <button type="button" class="icon" aria-label="Remove condition" onClick={() => update(c.key, () => null)}>
          ×
        </button>
      </li>
    );
  };

  const group = (g: Group, depth: number) => (
    // biome-ignore lint/a11y/useSemanticElements: a fieldset would bring its own border and legend into the builder
    <div class={`group depth-${depth % 2}`} key={g.key} role="group" aria-label={depth === 0 ? 'Filter' : 'Condition group'}>
      <div class="group-head">
        <label class="check">
          <input
            type="checkbox"
            checked={g.negate}
            onChange={(e) => update(g.key, (n) => ({ ...(n as Group), negate: e.currentTarget.checked }))}
          />
          not
        </label>
        <span>match</span>
        <select
          aria-label="Match"
          value={g.op}
          onChange={(e) => update(g.key, (n) => ({ ...(n as Group), op: e.currentTarget.value as 'and' | 'or' }))}
        >
          <option value="and">all (and)</option>
          <option value="or">any (or)</option>
        </select>
        <span>of</span>
        {depth > 0 && (
          <button type="button" class="icon" aria-label="Remove group" onClick={() => update(g.key, () => null)}>
            ×
          </button>
        )}
      </div>
      <ul>{g.children.map((c) => (c.kind === 'cond' ? condition(c) : <li key={c.key}>{group(c, depth + 1)}</li>))}</ul>
      <div class="group-actions">
        <button
          type="button"
          onClick={() =>
            filterable[0] && update(g.key, (n) => ({ ...(n as Group), children: [...(n as Group).children, newCond(filterable[0]!)] }))
          }
        >
          + Condition
        </button>
        <button
          type="button"
          onClick={() =>
            filterable[0] &&
            update(g.key, (n) => ({ ...(n as Group), children: [...(n as Group).children, newGroup('or', [newCond(filterable[0]!)])] }))
          }
        >
          + Group
        </button>
      </div>
    </div>
  );

  return (
    <form class="filter-builder" onSubmit={apply} aria-label="Filter builder">
      {group(root, 0)}
      {errors.length > 0 && (
        <ul class="error-note" role="alert">
          {errors.map((e, i) => (
            <li key={i}>{e}</li>
          ))}
        </ul>
      )}
      <div class="actions">
        <button type="submit" class="primary">
          Apply filter
        </button>
        <button
          type="button"
          onClick={() => {
            onApply(null);
            onClose();
          }}
        >
          Clear filter
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
