// Which columns a table shows: every column available_columns reports for the run, standard
// fields first, then metrics; the choice goes into the URL.
import { columnLabel } from '../lib/table-columns.js';
import type { ColumnInfo } from '../lib/types.js';

interface Props {
  columns: ColumnInfo[];
  visible: string[];
  onChange: (cols: string[] | null) => void;
  onClose: () => void;
}

export function ColumnPicker({ columns, visible, onChange, onClose }: Props) {
  const shown = new Set(visible);
  const toggle = (id: string, on: boolean) => onChange(on ? [...visible, id] : visible.filter((c) => c !== id));
  const groups: [string, ColumnInfo[]][] = [
    ['Fields', columns.filter((c) => c.category !== 'metric')],
    ['Metrics', columns.filter((c) => c.category === 'metric')],
  ];
  return (
    // biome-ignore lint/a11y/useSemanticElements: a fieldset would bring its own border and legend into the toolbar
    <div class="column-picker" role="group" aria-label="Columns">
      {groups.map(([title, cols]) =>
        cols.length === 0 ? null : (
          <fieldset key={title}>
            <legend>{title}</legend>
            {cols.map((c) => (
              <label class="check" key={c.id}>
                <input
                  type="checkbox"
                  checked={shown.has(c.id)}
                  disabled={shown.has(c.id) && visible.length === 1}
                  onChange={(e) => toggle(c.id, e.currentTarget.checked)}
                />
                {columnLabel(c, c.id)}
              </label>
            ))}
          </fieldset>
        ),
      )}
      <div class="actions">
        <button type="button" onClick={() => onChange(null)}>
          Default columns
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}
