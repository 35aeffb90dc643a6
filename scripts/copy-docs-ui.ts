// Copies Swagger UI's static files (from its npm package) into dist/docs-ui, so /docs serves them from
// a declared runtime folder: the same path in a normal install and in the single binary, whose bundle
// cannot read files next to a dependency's own source. Run by `npm run build`.
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageRoot } from './build-ui.js';

const root = packageRoot();
const from = join(dirname(createRequire(join(root, 'package.json')).resolve('@fastify/swagger-ui/package.json')), 'static');
const to = join(root, 'dist', 'docs-ui');
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
process.stdout.write(`docs page files copied to ${to}\n`);
