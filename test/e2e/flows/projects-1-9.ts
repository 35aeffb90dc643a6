// The project and log stream helpers of galileo 1.9 (its getProject takes {id} or {name}; it has no
// search, scorer or metric helpers). GALILEO_PROJECT names the project the batch flow filled.
import { writeFileSync } from 'node:fs';

const args = JSON.parse(process.env['FLOW_ARGS'] ?? '{}') as {
  projectName: string;
  logStream: string;
  newProject: string;
  newStream: string;
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const g = (await import(process.env['GALILEO_PKG'] ?? 'galileo-1-9')) as any;
const out: Record<string, unknown> = {};
out['projects'] = ((await g.getProjects()) as { name: string }[]).map((p) => p.name).sort();
const created = await g.createProject(args.newProject);
out['created'] = { id: created.id, name: created.name };
const byName = await g.getProject({ name: args.projectName });
out['byName'] = { id: byName.id, name: byName.name };
const byId = await g.getProject({ id: byName.id });
out['byId'] = { id: byId.id, name: byId.name };
const stream = await g.createLogStream(args.newStream, args.projectName);
out['newStream'] = { id: stream.id, name: stream.name };
out['streams'] = ((await g.getLogStreams(args.projectName)) as { name: string }[]).map((s) => s.name).sort();
const one = await g.getLogStream({ name: args.logStream, projectName: args.projectName });
out['stream'] = { id: one.id, name: one.name };
writeFileSync(process.env['FLOW_OUT']!, JSON.stringify(out));
process.exit(0);
