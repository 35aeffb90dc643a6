// `tracelake users | keys | members`: open the folder directly, run one admin action, close (without
// sealing: nothing was logged). They run while no server holds the folder (or use the HTTP routes).
import { parseArgs } from 'node:util';
import { TraceStore } from '../engine/trace-store.js';
import { dataDir } from './options.js';

async function withStore<T>(dir: string | undefined, fn: (store: TraceStore) => T | Promise<T>): Promise<T> {
  const store = await TraceStore.open(dataDir(dir));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const print = (v: unknown) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

/** Thrown for an action the group does not have; the dispatcher adds the group's usage. */
export class UnknownAction extends Error {}

export async function admin(group: string, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      description: { type: 'string' },
      project: { type: 'string' },
      role: { type: 'string' },
    },
  });
  const known = ['users create', 'users list', 'keys create', 'keys list', 'keys revoke', 'members add'];
  if (!known.includes(`${group} ${action}`)) throw new UnknownAction(`unknown command: ${group} ${action ?? ''}`.trimEnd());
  const need = (name: 'email' | 'project' | 'role') => {
    const v = values[name];
    if (!v) throw new Error(`--${name} is required`);
    return v;
  };
  await withStore(values.data, (store) => {
    const user = () => {
      const u = store.users.byEmail(need('email'));
      if (!u) throw new Error(`no user with email ${values.email}`);
      return u;
    };
    switch (`${group} ${action}`) {
      case 'users create': {
        const u = store.users.create({
          email: need('email'),
          ...(values.password ? { password: values.password } : {}),
          role: values.admin ? 'admin' : 'user',
          ...(values['first-name'] ? { first_name: values['first-name'] } : {}),
          ...(values['last-name'] ? { last_name: values['last-name'] } : {}),
        });
        return print({ id: u.id, email: u.email, role: u.role });
      }
      case 'users list':
        return print(store.users.list());
      case 'keys create': {
        const { key, id } = store.users.createApiKey(user().id, values.description ?? '');
        process.stdout.write(`API key ${id} (shown once, store it now):\n  ${key}\n`);
        return undefined;
      }
      case 'keys list':
        return print(store.users.listApiKeys(values.email ? user().id : undefined));
      case 'keys revoke': {
        const id = positionals[0];
        if (!id) throw new Error('usage: tracelake keys revoke KEY_ID');
        store.users.revokeApiKey(id);
        return print({ revoked: id });
      }
      default: {
        const project = store.catalog.findProjects({ name: need('project') })[0];
        if (!project) throw new Error(`no project named ${values.project}`);
        return print(store.catalog.addProjectMember(project.id, user().id, need('role') as never));
      }
    }
  });
}
