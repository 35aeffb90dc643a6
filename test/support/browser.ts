// Headless Chromium for the viewer's browser tests: Debian's `chromium` package driven by
// playwright-core (which never downloads a browser). Where no Chromium is found the tests skip
// with a message on a developer's machine, and fail under CI (CI or TRACELAKE_REQUIRE_BROWSER set),
// where .ci/run installs the package.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from '../../scripts/binary/config.js';

// TRACELAKE_CHROMIUM, when set, is the only browser tried.
const CANDIDATES = process.env['TRACELAKE_CHROMIUM']
  ? [process.env['TRACELAKE_CHROMIUM']]
  : ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'];

export const chromiumPath: string | undefined = CANDIDATES.find((p): p is string => !!p && existsSync(p));
const required = !!process.env['CI'] || !!process.env['TRACELAKE_REQUIRE_BROWSER'];

/**
 * `skip` option for a browser test: false when Chromium is here; a reason to skip otherwise. Under
 * CI a missing browser throws instead, so the run fails rather than passing without these tests.
 */
export function browserSkip(): false | string {
  if (chromiumPath) return false;
  const why = `no Chromium found (tried ${CANDIDATES.join(', ')}); install Debian's chromium package or set TRACELAKE_CHROMIUM`;
  if (required) throw new Error(`browser tests cannot run: ${why}`);
  process.stderr.write(`viewer browser tests skipped: ${why}\n`);
  return `skipped: ${why}`;
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    // Root in containers needs --no-sandbox; the rest keeps Chromium off this closed network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-default-apps',
      '--disable-extensions',
    ],
  });
}

export async function newPage(
  browser: Browser,
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    reducedMotion: 'reduce',
    colorScheme: options.colorScheme ?? 'light',
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  const page = await context.newPage();
  // Script errors and CSP violations fail the tests that check for them.
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[14]/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return { context, page, errors };
}

export const ARTIFACTS = join(ROOT, 'test', 'artifacts', 'ui');

/** A screenshot of the page into test/artifacts/ui (git-ignored), for people to look at. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Signs in through the form, as a user would. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/ui/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}
