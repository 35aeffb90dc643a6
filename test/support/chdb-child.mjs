// Child process of chdb.ts (plain JavaScript: it runs from a folder of test data, where no loader of
// the repository is found): runs the queries in TL_CHDB_QUERIES with chdb from test/deps and prints
// their rows as one JSON array (an array of rows per query).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const require = createRequire(join(root, 'test', 'deps', 'package.json'));
const { Session } = require('chdb');
const queries = JSON.parse(process.env['TL_CHDB_QUERIES'] ?? '[]');
// One session for all queries, so a database created by one (DataLakeCatalog) is there for the next.
const session = new Session();
const out = [];
for (const q of queries) {
  const text = session.query(q, 'JSONEachRow');
  out.push(
    text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l)),
  );
}
session.cleanup();
process.stdout.write(JSON.stringify(out));
