// The CLI's command table: the one list of commands, their usage lines and the environment variables.
// `tracelake` (dist/src/cli.js, or its bundle) and the single binary all dispatch through runCli, and the help text
// is generated from this table, so a command added here exists everywhere with no other change.
import { VERSION } from '../version.js';
import { admin, UnknownAction } from './admin.js';
import { exportCommand, importCommand, retentionCommand, sqlCommand } from './data.js';
import { icebergCommand } from './iceberg.js';
import { scoreCommand } from './score.js';
import { serve } from './serve.js';

export interface Command {
  name: string;
  /** Usage lines, each starting with the command's name (printed after `tracelake `). */
  usage: string[];
  run(argv: string[]): Promise<void>;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'serve',
    usage: [
      'serve [--data DIR] [--port N] [--host H] [--body-limit BYTES] [--request-timeout MS] [--memory-limit SIZE] [--model-prices FILE] ' +
        '[--text-index] [--no-merges] [--rate-limit N] [--rate-limit-window MS] [--iceberg-to DIR|s3://bucket/prefix] [--iceberg-every SECONDS] ' +
        '[--s3-endpoint URL] [--s3-region R] [--judge-url URL] [--judge-model M] [--judge-models name=model,...] ' +
        '[--judge-concurrency N] [--judge-timeout MS] [--python-scorers] [--no-online-scoring] [--no-ui] [--quiet]',
    ],
    run: serve,
  },
  {
    name: 'users',
    usage: ['users create --email E [--password P] [--admin] [--first-name F] [--last-name L] [--data DIR]', 'users list [--data DIR]'],
    run: (argv) => admin('users', argv),
  },
  {
    name: 'keys',
    usage: [
      'keys create --email E [--description D] [--data DIR]     (prints the key once)',
      'keys list [--email E] [--data DIR]',
      'keys revoke KEY_ID [--data DIR]',
    ],
    run: (argv) => admin('keys', argv),
  },
  {
    name: 'members',
    usage: ['members add --project NAME --email E --role owner|editor|annotator|viewer [--data DIR]'],
    run: (argv) => admin('members', argv),
  },
  {
    name: 'sql',
    usage: [
      'sql "SELECT ... FROM spans|traces|sessions|projects|runs" [--param V]... [--format jsonl|json|csv] [--read-only] [--data DIR]   (read-only)',
    ],
    run: sqlCommand,
  },
  {
    name: 'score',
    usage: [
      'score --project NAME --log-stream NAME --scorer NAME [--scorer NAME]... [--filter JSON] [--overwrite-logged] ' +
        '[--judge-url URL] [--python-scorers] [--data DIR]',
    ],
    run: scoreCommand,
  },
  {
    name: 'export',
    usage: [
      'export --project NAME [--log-stream NAME] [--level span|trace|session [--filter-tree JSON]] [--format parquet|jsonl|arrow] ' +
        '--out PATH [--read-only] [--data DIR]',
    ],
    run: exportCommand,
  },
  {
    name: 'import',
    usage: [
      'import PATH --project NAME --log-stream NAME [--format parquet|jsonl|arrow] [--batch-rows N] [--data DIR]   (an export, or JSON lines of v2 bodies)',
    ],
    run: importCommand,
  },
  {
    name: 'iceberg',
    usage: [
      'iceberg publish [--data DIR] [--to DIR|s3://bucket/prefix] [--s3-endpoint URL] [--s3-region R] [--keep-snapshots N] ' +
        '[--max-snapshot-age SECONDS]   (Iceberg v2 tables spans, traces, sessions; default --to <data>/iceberg)',
    ],
    run: icebergCommand,
  },
  {
    name: 'retention',
    usage: [
      'retention get --project NAME [--log-stream NAME] [--data DIR]',
      'retention set --project NAME [--log-stream NAME] --days N|none [--data DIR]   (expired records leave reads at once, the disk at the next compaction)',
    ],
    run: retentionCommand,
  },
];

/** Every environment variable the commands read (the binary reads the same ones, plus its cache). */
export const ENVIRONMENT: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['TRACELAKE_DATA', 'the data folder (default ./.tracelake)'],
  ['TRACELAKE_PORT', 'port to listen on (default 8088)'],
  ['TRACELAKE_HOST', 'address to listen on (default 127.0.0.1)'],
  ['TRACELAKE_API_KEY', 'an API key to accept; otherwise one is generated on first start'],
  ['TRACELAKE_BODY_LIMIT', 'largest request body in bytes (default 33554432)'],
  ['TRACELAKE_REQUEST_TIMEOUT', 'request timeout in ms (default 120000)'],
  ['TRACELAKE_MEMORY_LIMIT', "DuckDB's memory limit (default 384MB)"],
  ['TRACELAKE_MODEL_PRICES', 'a JSON file of model prices (data/model-prices.json format) over the shipped ones, for computed costs'],
  ['TRACELAKE_TEXT_INDEX', '1: write a text index beside each segment (fast contains on rare strings; costs ingest)'],
  ['TRACELAKE_RATE_LIMIT', 'requests per API key and window (off by default; 429 with Retry-After beyond)'],
  ['TRACELAKE_RATE_LIMIT_WINDOW', 'the rate limit window in ms (default 60000)'],
  ['AWS_ACCESS_KEY_ID', 'S3 credentials for Iceberg tables on s3:// (with AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION)'],
  ['TRACELAKE_CACHE_DIR', 'single binary only: where it unpacks its libraries (default ~/.cache/tracelake)'],
  ['TRACELAKE_NO_BUNDLE', "1: run the build's modules, not its one-file bundle dist/tracelake.mjs (which starts ~0.3 s sooner)"],
];

export function usage(): string {
  const lines = COMMANDS.flatMap((c) => c.usage).map((u) => `  tracelake ${u}`);
  const envLines = ENVIRONMENT.map(([name, meaning]) => `  ${name.padEnd(26)} ${meaning}`);
  return [
    `tracelake ${VERSION}`,
    '',
    'Usage:',
    ...lines,
    '  tracelake --version',
    '  tracelake <command> --help',
    '',
    'Environment:',
    ...envLines,
  ].join('\n');
}

function commandUsage(c: Command): string {
  return `Usage:\n${c.usage.map((u) => `  tracelake ${u}`).join('\n')}`;
}

/** Runs one command line (argv without the program). Resolves when a one-shot command is done. */
export async function runCli(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (command) {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${commandUsage(command)}\n`);
      return;
    }
    try {
      await command.run(rest);
    } catch (err) {
      if (err instanceof UnknownAction) throw new Error(`${err.message}\n\n${commandUsage(command)}`);
      throw err;
    }
    return;
  }
  switch (name) {
    case '--version':
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(`${usage()}\n`);
      return;
    default:
      process.stderr.write(`unknown command: ${name}\n\n${usage()}\n`);
      process.exitCode = 2;
  }
}
