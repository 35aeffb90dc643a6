// Python code scorers (createCustomCodeMetric) run only when the operator turns the runner on
// (--python-scorers): the code is then run by a python3 subprocess with the server's own rights,
// which is why it is off by default: code sent over the network is never run otherwise. A batch is one
// subprocess: the code is loaded, its scorer_fn called once per record with the hosted service's
// keyword arguments, and the numbers read back as JSON; a batch past its time limit is killed.
import { spawn } from 'node:child_process';
import { asText } from './compute/text.js';
import { outcomeOf, type Outcome, type Runner, type ScorableRecord } from './outcome.js';

export interface PythonOptions {
  /** The interpreter (default python3). */
  command?: string;
  /** Milliseconds a batch may take before its process is killed (default 30,000). */
  timeoutMs?: number;
}

const HARNESS = `
import json, sys
req = json.load(sys.stdin)
ns = {"__name__": "tracelake_scorer"}
try:
    exec(compile(req["code"], "scorer.py", "exec"), ns)
    fn = ns["scorer_fn"]
except Exception as e:
    print(json.dumps({"fatal": "%s: %s" % (type(e).__name__, e)}))
    sys.exit(0)
out = []
for i, r in enumerate(req["records"]):
    try:
        v = fn(index=i, **r)
        if isinstance(v, bool):
            out.append({"value": v})
        elif isinstance(v, (int, float)):
            out.append({"value": float(v)})
        elif v is None:
            out.append({"value": None})
        else:
            out.append({"error": "scorer_fn returned %s, not a number" % type(v).__name__})
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
print(json.dumps({"results": out}))
`;

/** The keyword arguments scorer_fn gets for a record (besides index). */
export function pythonArgs(r: ScorableRecord): Record<string, unknown> {
  return {
    node_input: asText(r.input) ?? '',
    node_output: asText(r.output) ?? '',
    node_name: r.name ?? '',
    node_type: r.type,
    node_id: r.id,
    tools: r.tools ?? null,
    dataset_variables: { ...(r.dataset_metadata ?? {}), ground_truth: r.dataset_output ?? null, input: r.dataset_input ?? null },
  };
}

/** Runs scorer_fn of `code` over records: one result per record (values, or errors), or throws for the whole batch. */
export function runPython(
  code: string,
  records: readonly Record<string, unknown>[],
  options: PythonOptions = {},
): Promise<({ value: unknown } | { error: string })[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = spawn(options.command ?? 'python3', ['-I', '-c', HARNESS], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the Python scorer took more than ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`python3 could not be started: ${e.message}`));
    });
    child.on('close', () => {
      clearTimeout(timer);
      let parsed: { fatal?: string; results?: ({ value: unknown } | { error: string })[] };
      try {
        parsed = JSON.parse(out.trim().split('\n').pop() ?? '');
      } catch {
        reject(new Error(`the Python scorer printed no result${err ? `: ${err.trim().slice(-300)}` : ''}`));
        return;
      }
      if (parsed.fatal) reject(new Error(`the Python scorer could not be loaded: ${parsed.fatal}`));
      else resolve(parsed.results ?? []);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ code, records }));
  });
}

export function pythonRunner(code: string, options: PythonOptions): Runner {
  return async (records) => {
    const results = await runPython(code, records.map(pythonArgs), options);
    return records.map((_, i): Outcome => {
      const r = results[i];
      if (!r) return { status: 'failed', message: 'the Python scorer gave no result for this record' };
      return 'error' in r ? { status: 'failed', message: r.error } : outcomeOf(r.value);
    });
  };
}
