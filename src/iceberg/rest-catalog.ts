// The read side of the Iceberg REST catalog over a publish target: one namespace (`tracelake`)
// holding the tables published there (spans, traces, sessions), each loaded from its newest committed
// metadata version. The HTTP routes are in src/server/routes/iceberg.ts.
import { NotFoundError } from '../errors.js';
import type { TableMetadata } from './metadata.js';
import { KINDS, TABLE_OF } from './schema.js';
import { latestVersion, metadataRel } from './table-state.js';
import type { Target } from './target.js';

export const NAMESPACE = 'tracelake';
const TABLES = KINDS.map((k) => TABLE_OF[k]);

/** A missing namespace or table, named as the REST catalog's error model names it. */
export class NoSuchIcebergError extends NotFoundError {
  constructor(
    message: string,
    readonly icebergType: 'NoSuchNamespaceException' | 'NoSuchTableException',
  ) {
    super(message);
  }
}

export interface LoadedTable {
  readonly 'metadata-location': string;
  readonly metadata: TableMetadata;
  readonly config: Readonly<Record<string, string>>;
}

export class RestCatalog {
  readonly #open: () => Target;
  #target: Target | undefined;

  /** `open` makes the target on first use (an S3 target needs credentials only when asked). */
  constructor(open: () => Target) {
    this.#open = open;
  }

  get target(): Target {
    return (this.#target ??= this.#open());
  }

  namespaces(parent?: string): string[][] {
    // One level: nothing is nested under `tracelake`.
    return parent ? [] : [[NAMESPACE]];
  }

  namespace(ns: string): { namespace: string[]; properties: Record<string, string> } {
    this.#checkNamespace(ns);
    return { namespace: [NAMESPACE], properties: { location: this.target.uri('') } };
  }

  async tables(ns: string): Promise<{ namespace: string[]; name: string }[]> {
    this.#checkNamespace(ns);
    const out: { namespace: string[]; name: string }[] = [];
    for (const t of TABLES) if ((await this.#version(t)) > 0) out.push({ namespace: [NAMESPACE], name: t });
    return out;
  }

  async load(ns: string, table: string): Promise<LoadedTable> {
    this.#checkNamespace(ns);
    const version = TABLES.includes(table) ? await this.#version(table) : 0;
    const bytes = version > 0 ? await this.target.get(metadataRel(table, version)) : null;
    if (!bytes) throw new NoSuchIcebergError(`Table does not exist: ${NAMESPACE}.${table}`, 'NoSuchTableException');
    return {
      'metadata-location': this.target.uri(metadataRel(table, version)),
      metadata: JSON.parse(bytes.toString('utf8')) as TableMetadata,
      config: {},
    };
  }

  #checkNamespace(ns: string): void {
    // Multi-part namespaces arrive joined by the unit separator (%1F).
    if (ns !== NAMESPACE)
      throw new NoSuchIcebergError(`Namespace does not exist: ${ns.replaceAll('\x1f', '.')}`, 'NoSuchNamespaceException');
  }

  async #version(table: string): Promise<number> {
    return latestVersion(table, (await this.target.list(`${table}/metadata`)).keys());
  }
}
