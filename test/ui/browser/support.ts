// Shared setup of the viewer's browser tests: a fresh build of the viewer, a real server on a
// loopback port with seeded data, one Chromium, and small helpers to read the page.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../../scripts/build-ui.js';
import { launch } from '../../support/browser.js';
import type { TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { startServer, tempDir, type ServerFixture } from '../../support/helpers.js';

// Globals of the page, used by the functions page.evaluate runs there (tests compile without the DOM lib).
declare const document: any;

export interface Harness {
  fx: ServerFixture;
  browser: Browser;
  close(): Promise<void>;
}

/** A server serving a viewer built from the current sources, and a browser. */
export async function harness(store?: TraceStoreOptions): Promise<Harness> {
  const cleanups: (() => unknown)[] = [];
  const t = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
  const built = await buildUi(join(tempDir(t, 'tracelake-ui-'), 'ui'));
  const fx = await startServer(t, { viewer: { dir: built.dir }, ...(store ? { store } : {}) });
  const browser = await launch();
  return {
    fx,
    browser,
    async close() {
      await browser.close();
      for (const fn of cleanups.reverse()) await fn();
    },
  };
}

/** Polls until `check` holds (or fails with its last message): the page updates after the network. */
export async function until(check: () => Promise<boolean | string>, what: string, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: boolean | string = false;
  while (Date.now() < end) {
    last = await check();
    if (last === true) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what}${typeof last === 'string' ? `: ${last}` : ''}`);
}

/** Record ids of the table's rows, read from the links in their name cells. */
export async function rowIds(page: Page): Promise<string[]> {
  const hrefs = await page.locator('table.records tbody td.col-name a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
  return hrefs.map((h) => {
    const u = new URL(h, 'http://x');
    return u.searchParams.get('span') ?? u.pathname.split('/').pop()!;
  });
}

/** Waits until the table shows exactly these ids, in this order. */
export async function expectRows(page: Page, ids: string[], what: string): Promise<void> {
  await until(async () => {
    const got = await rowIds(page);
    return (
      JSON.stringify(got) === JSON.stringify(ids) ||
      `got ${got.length} rows starting ${got.slice(0, 3).join(', ')}; want ${ids.slice(0, 3).join(', ')}`
    );
  }, what);
}

export async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent()) ?? '').trim();
}

export async function treeState(page: Page): Promise<{ rows: number; selected: string; expanded: string | null }> {
  return page.evaluate(() => {
    const sel = document.querySelector('[role=treeitem][aria-selected=true]');
    return {
      rows: document.querySelectorAll('[role=treeitem]').length,
      selected: sel?.querySelector('.span-name')?.textContent ?? '',
      expanded: sel?.getAttribute('aria-expanded') ?? null,
    };
  });
}
