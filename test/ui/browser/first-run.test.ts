// Guarantees the path of a new user: `tracelake serve` on a fresh folder prints where the viewer is
// and a key; with that key the browser signs in, says how to log traces while there are none, and
// once an application logs one, leads in a few clicks to its spans.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi, packageRoot } from '../../../scripts/build-ui.js';
import { browserSkip, launch, newPage, shot } from '../../support/browser.js';
import { jsonCaller, tempDir } from '../../support/helpers.js';
import { nodeEntry } from '../../support/node-entry.js';

describe('a new user, from `tracelake serve` to a trace’s spans', { skip: browserSkip() }, () => {
  const root = packageRoot();
  let stop: () => Promise<void>;
  let viewer: string;
  let key: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    // What `npm install` leaves behind (prepare builds the viewer into dist/ui), from the current sources.
    await buildUi();
    const env = { ...process.env };
    delete env['TRACELAKE_API_KEY'];
    const child = spawn(
      process.execPath,
      [
        ...nodeEntry(join(root, 'src', 'cli.ts')),
        'serve',
        '--data',
        join(tempDir(undefined, 'tracelake-first-'), 'data'),
        '--port',
        '0',
        '--quiet',
      ],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    stop = () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    const out = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`tracelake serve printed only: ${text}`)), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        text += d.toString();
        if (/API key .*\n\s+\S+/.test(text) && /Viewer: open \S+/.test(text)) {
          clearTimeout(timer);
          resolve(text);
        }
      });
      child.once('exit', (code) => reject(new Error(`tracelake serve exited with ${code}`)));
    });
    viewer = /Viewer: open (\S+)/.exec(out)![1]!;
    key = /API key .*\n\s+(\S+)/.exec(out)![1]!;
    browser = await launch();
    ({ page, errors } = await newPage(browser));
  });
  after(async () => {
    await browser?.close();
    await stop?.();
  });

  test('the printed address and key sign in; with no data the page says how to log some', async () => {
    assert.match(viewer, /^http:\/\/127\.0\.0\.1:\d+\/ui\/$/);
    await page.goto(viewer.replace(/\/ui\/$/, '/'));
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    assert.match(await page.locator('.empty pre').innerText(), new RegExp(`GALILEO_API_URL=${viewer.replace(/\/ui\/$/, '')}`));
    await shot(page, '00-first-run');
  });

  test('after an application logs a trace: project, log stream, trace, span, in clicks', async () => {
    const base = viewer.replace(/\/ui\/$/, '');
    const call = jsonCaller(base, key);
    // What the official client sends: project, log stream, then the trace.
    const project = (await call('POST', '/projects', { name: 'my-app', type: 'gen_ai' })).body;
    const stream = (await call('POST', `/projects/${project.id}/log_streams`, { name: 'default' })).body;
    const logged = await call('POST', `/projects/${project.id}/traces`, {
      log_stream_id: stream.id,
      traces: [
        {
          type: 'trace',
          name: 'answer question',
          input: 'What is the capital of France?',
          output: 'Paris',
          spans: [
            {
              type: 'llm',
              name: 'chat',
              input: [{ role: 'user', content: 'What is the capital of France?' }],
              output: { role: 'assistant', content: 'Paris' },
              model: 'gpt-4o',
            },
          ],
        },
      ],
    });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    await page.reload();
    await page.getByRole('link', { name: 'default' }).click();
    await page.getByRole('link', { name: 'answer question' }).click();
    await page.getByRole('treeitem').filter({ hasText: 'chat' }).click();
    await page.getByRole('article', { name: 'assistant message' }).filter({ hasText: 'Paris' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
