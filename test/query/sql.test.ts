// Guarantees: a fragment's values only ever become parameters, numbered once in the order they appear
// in the final text (a fragment spliced in brings its own along); one Value written twice is one
// placeholder; identifiers and integers enter the text only when they are plain ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, ident, int, joinSql, param, raw, sql, EMPTY } from '../../src/query/sql.js';

test('values become placeholders numbered by where they appear, fragments spliced with theirs', () => {
  const where = sql`trace_id = ${'t1'} AND name = ${"O'Brien; DROP TABLE dead"}`;
  const q = sql`SELECT id FROM ${ident('mem_3')} WHERE ${where} LIMIT ${10}`;
  assert.deepEqual(compile(q), {
    text: 'SELECT id FROM mem_3 WHERE trace_id = $1 AND name = $2 LIMIT $3',
    params: ['t1', "O'Brien; DROP TABLE dead", 10],
  });
  // Built inside out, numbered outside in: a CTE built last but written first gets the first numbers.
  const body = sql`SELECT * FROM t WHERE a = ${1}`;
  const cte = sql`c AS (SELECT ${2} AS b)`;
  assert.deepEqual(compile(sql`WITH ${cte} ${body}`), { text: 'WITH c AS (SELECT $1 AS b) SELECT * FROM t WHERE a = $2', params: [2, 1] });
});

test('a Value or a fragment written twice binds its values once', () => {
  const v = param('x');
  assert.deepEqual(compile(sql`${v} = ${v} OR ${'x'} = ${'x'}`), { text: '$1 = $1 OR $2 = $3', params: ['x', 'x', 'x'] });
  const list = joinSql(['a', 'b'].map((s) => sql`${s}`));
  assert.deepEqual(compile(sql`c IN (${list}) AND list_contains([${list}], c)`), {
    text: 'c IN ($1, $2) AND list_contains([$1, $2], c)',
    params: ['a', 'b'],
  });
  // Each compile numbers afresh: a Value compiled before is numbered where it stands now.
  assert.deepEqual(compile(sql`${1}, ${v}`), { text: '$1, $2', params: [1, 'x'] });
  assert.deepEqual(compile(sql`${v}`), { text: '$1', params: ['x'] });
});

test('lists, nulls and numbers are values; joins and the empty fragment add no parameter', () => {
  const q = sql`SELECT unnest(${['a', 'b']}::VARCHAR[]), ${null}, ${1.5}, ${true}${EMPTY}`;
  assert.deepEqual(compile(q), { text: 'SELECT unnest($1::VARCHAR[]), $2, $3, $4', params: [['a', 'b'], null, 1.5, true] });
  assert.deepEqual(compile(joinSql([])), { text: '', params: [] });
  assert.deepEqual(compile(joinSql([raw('a'), sql`${2}`, raw('c')], ' OR ')), { text: 'a OR $1 OR c', params: [2] });
  // A placeholder-looking value is a value.
  assert.deepEqual(compile(sql`SELECT ${'$1'}`), { text: 'SELECT $1', params: ['$1'] });
});

test('identifiers and integers are written only when plain', () => {
  assert.equal(compile(sql`SELECT ${ident('m12')} FROM ${ident('_t')} LIMIT ${int(5)}`).text, 'SELECT m12 FROM _t LIMIT 5');
  for (const bad of ['a b', 'a;b', 'a"', "a'", '', '1a', 'a.b', 'mx0--'])
    assert.throws(() => ident(bad), /not a plain SQL identifier/, bad);
  for (const bad of [1.5, NaN, Infinity, 2 ** 53]) assert.throws(() => int(bad), /not a safe integer/, String(bad));
  assert.equal(compile(sql`${int(-3)}`).text, '-3');
});
