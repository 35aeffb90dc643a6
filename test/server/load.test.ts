// Guarantees: concurrent clients logging (reliable and not), searching, counting and deleting against
// a real server on loopback for a fixed number of requests get no error, and every logged record is
// accounted for (logged - deleted = counted, by count and by walking every id, live and after
// reopening). Peak memory is reported, not bounded (a measurement: bench/load.ts). The longer
// version: node --import tsx bench/load.ts --duration 120.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatReport, runLoad } from '../../bench/load.js';

// A fixed number of requests of each kind (not a time budget), so every run does the same work: at
// least what the former time budget reached on a loaded 2-core machine. TRACELAKE_LOAD_SECONDS runs
// for a time instead.
const SECONDS = process.env['TRACELAKE_LOAD_SECONDS'] ? Number(process.env['TRACELAKE_LOAD_SECONDS']) : undefined;
const REQUESTS = { log: 120, search: 40, count: 52, delete: 12 };

const what =
  SECONDS === undefined
    ? `${REQUESTS.log} log, ${REQUESTS.search} search, ${REQUESTS.count} count and ${REQUESTS.delete} delete requests`
    : `${SECONDS} s`;
test(`load on loopback (${what}): no errors, every record accounted for`, { timeout: ((SECONDS ?? 180) + 120) * 1000 }, async (t) => {
  const clients = { loggers: 3, searchers: 2, counters: 2, deleters: 1 };
  const report = await runLoad(
    SECONDS === undefined ? { durationSec: Infinity, stopAfter: REQUESTS, ...clients } : { durationSec: SECONDS, ...clients },
  );
  for (const line of formatReport(report).split('\n')) t.diagnostic(line);
  assert.deepEqual(report.errorSamples, [], 'no errors');
  assert.equal(report.errors, 0);
  assert.ok(report.accounted, 'logged - deleted = counted');
  assert.ok(report.reopened.ok, 'the same counts after reopening');
  assert.ok(
    report.logged.batches > 10 && report.deleted.batches > 2 && report.requests.search > 10 && report.requests.count > 10,
    'every kind of client made progress',
  );
});
