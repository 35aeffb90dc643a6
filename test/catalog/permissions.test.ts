// Guarantees: the role -> action matrix is exactly the documented one (owner everything, editor all
// but delete and share, annotator only record_human_feedback, viewer and no role nothing, admins
// and library callers everything), every refusal says why, and scorer permissions follow type,
// creator and admin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { User } from '../../src/catalog/catalog.js';
import { can, PROJECT_ACTIONS, PROJECT_ROLES, SCORER_ACTIONS, type ProjectRole } from '../../src/catalog/permissions.js';

const user = (role: 'admin' | 'user' = 'user', id = 'u1'): User => ({
  id,
  email: `${id}@x`,
  first_name: '',
  last_name: '',
  role,
  created_at: '',
});
const project = { id: 'p', name: 'Demo' };

const OWNER_ONLY = new Set(['delete', 'share']);
function expected(role: ProjectRole | null, action: string): boolean {
  if (role === 'owner') return true;
  if (role === 'editor') return !OWNER_ONLY.has(action);
  if (role === 'annotator') return action === 'record_human_feedback';
  return false;
}

test('project roles: the documented matrix, with reasons for every refusal', () => {
  assert.equal(PROJECT_ACTIONS.length, 25);
  for (const role of [...PROJECT_ROLES, null]) {
    for (const action of PROJECT_ACTIONS) {
      const p = can(user(), action, { kind: 'project', project, role });
      assert.equal(p.allowed, expected(role, action), `${role} ${action}`);
      assert.equal(p.action, action);
      if (p.allowed) assert.equal(p.message, null);
      else assert.match(p.message!, role === null ? /no role in project "Demo"/ : new RegExp(`you are an? ${role}`), `${role} ${action}`);
    }
  }
  for (const action of PROJECT_ACTIONS) {
    assert.equal(can(user('admin'), action, { kind: 'project', project, role: null }).allowed, true, `admin ${action}`);
    assert.equal(can(null, action, { kind: 'project', project, role: null }).allowed, true, `library ${action}`);
  }
});

test('scorer permissions: presets read-only, registered ones for creator and admins, autotune for llm only', () => {
  const scorer = (scorer_type: string, created_by: string | null) => ({
    kind: 'scorer' as const,
    scorer: { name: 'S', scorer_type, created_by },
  });
  for (const action of SCORER_ACTIONS) {
    assert.equal(can(user('admin'), action, scorer('preset', null)).allowed, action === 'export', `preset ${action}`);
    assert.equal(can(user('user', 'u1'), action, scorer('llm', 'u1')).allowed, true, `creator ${action}`);
    assert.equal(can(user('user', 'u2'), action, scorer('llm', 'u1')).allowed, action === 'export', `stranger ${action}`);
    assert.equal(can(user('admin', 'u2'), action, scorer('code', 'u1')).allowed, action !== 'autotune_apply', `admin code ${action}`);
  }
  assert.match(can(user(), 'update', scorer('preset', null)).message!, /built-in preset scorer and is read-only/);
  assert.match(can(user(), 'autotune_apply', scorer('code', 'u1')).message!, /only to llm scorers/);
});
