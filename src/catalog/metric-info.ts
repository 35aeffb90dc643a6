// What a metric column says about itself (label, unit, roll-up, threshold), from the scorer that
// writes it (presets and registered scorers, matched by metric_name), else from its name.
import type { Catalog } from './catalog.js';
import { ROLL_UP_METHODS, type MetricInfo, type RollUpMethod } from '../query/columns.js';

/** Default roll-up for metrics no scorer describes: counts add up, durations take the max, the rest averages. */
export function defaultMetricInfo(name: string): MetricInfo {
  if (/^num_.*tokens$/.test(name) || name === 'cost') return { roll_up_method: 'sum', label: labelOf(name) };
  if (name.endsWith('_ns')) return { roll_up_method: 'max', data_unit: 'nano_seconds', label: labelOf(name) };
  return { label: labelOf(name) };
}

function labelOf(name: string): string {
  return name.replace(/_/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());
}

const SAFETY_TAGS = new Set(['safety', 'security', 'privacy', 'toxicity']);

interface ScorerLike {
  name: string;
  label?: string | null;
  description?: string | null;
  tags?: string[];
  output_type?: string | null;
  roll_up_method?: string | null;
  metric_name?: string | null;
  color_threshold_config?: { constraints?: { color: string; operator: string; value: unknown }[] } | null;
}

/** A numeric colour picker's constraints as two bucket boundaries and three levels. */
function thresholdOf(s: ScorerLike): MetricInfo['threshold'] | undefined {
  const cs = s.color_threshold_config?.constraints;
  if (!cs || cs.length === 0) return undefined;
  const bounds = [
    ...new Set(cs.flatMap((c) => (Array.isArray(c.value) ? c.value : [c.value])).filter((v): v is number => typeof v === 'number')),
  ].sort((a, b) => a - b);
  if (bounds.length < 2) return undefined;
  const lowest = cs.find((c) => c.operator === 'lt' || c.operator === 'lte');
  return {
    buckets: [bounds[0]!, bounds[bounds.length - 1]!],
    display_value_levels: ['low', 'medium', 'high'],
    inverted: lowest?.color === 'green',
  };
}

export function metricInfoOf(s: ScorerLike): MetricInfo {
  const info: MetricInfo = { label: s.label || s.name };
  if (s.description) info.description = s.description;
  if (s.tags?.some((t) => SAFETY_TAGS.has(t))) info.group_label = 'Safety Metrics';
  if (s.output_type === 'percentage') info.data_unit = 'percentage';
  if (s.roll_up_method && (ROLL_UP_METHODS as readonly string[]).includes(s.roll_up_method))
    info.roll_up_method = s.roll_up_method as RollUpMethod;
  const threshold = thresholdOf(s);
  if (threshold) info.threshold = threshold;
  return info;
}

/** Whether some scorer of the catalog writes a metric of this name (rebuilt when the catalog changes). */
export function scorerMetricTest(catalog: Catalog): (name: string) => boolean {
  let version = -1;
  let names = new Set<string>();
  return (name) => {
    if (version !== catalog.version) {
      version = catalog.version;
      names = new Set((catalog.scorers.rows() as ScorerLike[]).map((row) => row.metric_name || row.name));
    }
    return names.has(name);
  };
}

/** A resolver over the catalog's scorers, rebuilt when the catalog changes. */
export function metricInfoResolver(catalog: Catalog): (name: string) => MetricInfo {
  let version = -1;
  let byMetric = new Map<string, MetricInfo>();
  return (name) => {
    if (version !== catalog.version) {
      version = catalog.version;
      byMetric = new Map();
      for (const row of catalog.scorers.rows() as ScorerLike[]) {
        const key = row.metric_name || row.name;
        if (!byMetric.has(key)) byMetric.set(key, metricInfoOf(row));
      }
    }
    return byMetric.get(name) ?? defaultMetricInfo(name);
  };
}
