// `tracelake score`: scores the records of a log stream with named scorers (a filter narrows them, as
// a count takes it), with a progress bar, against the data folder directly (not while a server holds it).
import { parseArgs } from 'node:util';
import { withStore, selectRun } from './data.js';
import { jsonFlag } from './options.js';
import { progressBar } from './progress.js';
import { scoringOptions, SCORING_FLAGS } from './scoring-options.js';

export async function scoreCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      project: { type: 'string' },
      'log-stream': { type: 'string' },
      scorer: { type: 'string', multiple: true },
      filter: { type: 'string' },
      'overwrite-logged': { type: 'boolean' },
      ...SCORING_FLAGS,
    },
  });
  if (!values['log-stream']) throw new Error('--log-stream is required');
  if (!values.scorer || values.scorer.length === 0) throw new Error('--scorer is required (once per scorer)');
  const parsed = jsonFlag('--filter', values.filter, 'a list of filters, or { "filters": [...] } / { "filter_tree": {...} }');
  const filter = (Array.isArray(parsed) ? { filters: parsed } : (parsed ?? {})) as { filters?: never; filter_tree?: never };
  const scoring = { ...scoringOptions(values), online: false };
  await withStore(
    values.data,
    async (store) => {
      const { projectId, ids } = selectRun(store, values.project, values['log-stream']);
      const job = store.scorers.score({
        projectId,
        runId: ids.log_stream_id!,
        scorers: values.scorer!,
        filter,
        overwriteLogged: values['overwrite-logged'] === true,
      });
      const bar = progressBar(`score ${values.scorer!.join(', ')}`);
      const timer = setInterval(() => bar.update(store.scorers.job(job.id).progress_percent / 100), 200);
      try {
        const done = await store.scorers.wait(job.id);
        bar.update(1);
        if (done.status === 'failed') throw new Error(`scoring failed: ${done.error_message}`);
        process.stderr.write(`${done.progress_message}\n`);
      } finally {
        clearInterval(timer);
        bar.stop();
      }
    },
    { scoring },
  );
}
