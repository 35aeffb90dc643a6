// A node:test reporter that writes one JSON line per skipped or todo test (file, name, reason) and
// nothing else; test/run.mjs gives it a file of its own beside the spec reporter's output and judges
// the skips against the documented list (docs/testing.md). Skips are read from the events, not from
// the spec reporter's text, so a skip in a subtest or of a whole suite is counted too.
export default async function* skipReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, todo, name, file, nesting } = event.data;
    if (skip === undefined && todo === undefined) continue;
    yield `${JSON.stringify({ kind: skip !== undefined ? 'skip' : 'todo', file: file ?? '', name, nesting, reason: String(skip ?? todo ?? '') })}\n`;
  }
}
