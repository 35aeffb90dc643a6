// The client's helper functions, each of which builds its own API client (healthcheck, login, default
// project and log stream resolution) before its call: projects (list, create, get by name and id),
// log streams (create, list, get), experiments (create, list), record search (spans with a filter and a sort, traces, sessions),
// count, available columns, delete, the scorers enabled in a log stream, the scorer list (paged until
// next_starting_token is null) and one scorer version; and two lookups that fail (error messages).
// GALILEO_PROJECT / GALILEO_LOG_STREAM name the project the batch flow filled. Only calls that galileo
// 1.32 has too (string project names for the log stream helpers).
import { writeFileSync } from 'node:fs';

type Galileo = typeof import('galileo');
const args = JSON.parse(process.env['FLOW_ARGS'] ?? '{}') as {
  projectName: string;
  logStream: string;
  newProject: string;
  newStream: string;
  deleteName: string;
  missingProjectId: string;
};
const g = (await import(process.env['GALILEO_PKG'] ?? 'galileo')) as Galileo;
const out: Record<string, unknown> = {};
const errorOf = async (fn: () => Promise<unknown>) => {
  try {
    await fn();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

// Projects.
out['projects'] = (await g.getProjects()).map((p) => p.name).sort();
const created = await g.createProject(args.newProject);
out['created'] = { id: created.id, name: created.name };
const byName = await g.getProject({ name: args.projectName });
out['byName'] = { id: byName.id, name: byName.name };
const byId = await g.getProject({ projectId: byName.id });
out['byId'] = { id: byId.id, name: byId.name, createdAt: byId.createdAt };
out['missingProjectError'] = await errorOf(() => g.getProject({ projectId: args.missingProjectId }));

// Log streams.
const stream = await g.createLogStream(args.newStream, args.projectName);
out['newStream'] = { id: stream.id, name: stream.name, projectId: stream.projectId };
const streams = await g.getLogStreams(args.projectName);
out['streams'] = streams.map((s) => ({ id: s.id, name: s.name, projectId: s.projectId })).sort((a, b) => a.name.localeCompare(b.name));
const logStreamId = streams.find((s) => s.name === args.logStream)!.id;
out['logStreamId'] = logStreamId;
const one = await g.getLogStream({ name: args.logStream, projectName: args.projectName });
out['oneStream'] = { id: one.id, name: one.name };

// Experiments (the run only: running one needs datasets, which tracelake does not have).
const experiment = await g.createExperiment('baseline', args.projectName);
out['experiment'] = { id: experiment.id, name: experiment.name };
out['experiments'] = (await g.getExperiments(args.projectName)).map((e) => e.name);

// Search.
const llmSpans = await g.getSpans({
  projectId: byName.id,
  logStreamId,
  filters: [{ columnId: 'type', operator: 'eq', value: 'llm', type: 'text' }],
  sort: { columnId: 'created_at', ascending: false },
  limit: 10,
} as never);
out['llmSpans'] = llmSpans.records?.map((r) => ({ id: r.id, name: r.name, type: r.type, createdAt: r.createdAt, metrics: r.metrics }));
out['llmSpansPaging'] = {
  limit: llmSpans.limit,
  startingToken: llmSpans.startingToken,
  nextStartingToken: llmSpans.nextStartingToken ?? null,
};
const firstPage = await g.getSpans({
  projectId: byName.id,
  logStreamId,
  sort: { columnId: 'created_at', ascending: true },
  limit: 2,
} as never);
out['firstPage'] = { names: firstPage.records?.map((r) => r.name), next: firstPage.nextStartingToken ?? null };
const secondPage = await g.getSpans({
  projectId: byName.id,
  logStreamId,
  sort: { columnId: 'created_at', ascending: true },
  limit: 2,
  startingToken: firstPage.nextStartingToken ?? 0,
} as never);
out['secondPage'] = { names: secondPage.records?.map((r) => r.name), next: secondPage.nextStartingToken ?? null };
const traces = await g.getTraces({
  projectId: byName.id,
  logStreamId,
  filters: [{ columnId: 'tags', operator: 'contains', value: 'batch', type: 'collection' }],
} as never);
out['traces'] = traces.records?.map((r) => ({ id: r.id, name: r.name, tags: r.tags }));
const sessions = await g.getSessions({ projectId: byName.id, logStreamId } as never);
out['sessionCount'] = sessions.records?.length;
out['badColumnError'] = await errorOf(() =>
  g.getSpans({
    projectId: byName.id,
    logStreamId,
    filters: [{ columnId: 'no_such_column', operator: 'eq', value: 'x', type: 'text' }],
  } as never),
);

// Scorers enabled in the log stream (run scorer settings) get a column before any record has them.
out['enabled'] = await g.enableMetrics({ projectName: args.projectName, logStreamName: args.logStream, metrics: ['correctness'] as never });

// Count, available columns, delete (the client's API object: init names project and stream).
const client = new g.GalileoApiClient();
await client.init({ projectName: args.projectName, logStreamName: args.logStream });
const deleteFilter = [{ columnId: 'name', operator: 'eq', value: args.deleteName, type: 'text' }];
out['countAll'] = (await client.countSpans({} as never)).totalCount;
out['countToDelete'] = (await client.countSpans({ filters: deleteFilter } as never)).totalCount;
const columns = await client.getSpansAvailableColumns({} as never);
out['columns'] = columns.columns?.map((c) => ({ id: c.id, category: c.category, dataType: c.dataType, filterable: c.filterable }));
out['deleted'] = await client.deleteSpans({ filters: deleteFilter } as never);
out['countAfter'] = (await client.countSpans({} as never)).totalCount;
out['traceCount'] = (await client.countTraces({} as never)).totalCount;

// Scorers: every page, then filtered by type and by names.
const all = await g.getScorers();
out['scorerCount'] = all.length;
out['scorerIdsUnique'] = new Set(all.map((s) => s.id)).size;
out['presetCount'] = (await g.getScorers({ type: 'preset' as never })).length;
const byNames = await g.getScorers({ names: ['correctness', 'completeness'] });
out['byNames'] = byNames.map((s) => ({ name: s.name, scorerType: s.scorerType })).sort((a, b) => a.name.localeCompare(b.name));
const correctness = byNames.find((s) => s.name === 'correctness')!;
const version = await g.getScorerVersion(correctness.id, 1);
out['scorerVersion'] = { id: version.id, version: version.version, scorerId: version.scorerId };
out['missingVersionError'] = await errorOf(() => g.getScorerVersion(correctness.id, 99));

writeFileSync(process.env['FLOW_OUT']!, JSON.stringify(out));
process.exit(0);
