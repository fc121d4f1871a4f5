// The reference docs (`npm run docs`) in real headless Chromium: every operation renders with
// its summary, method, path and examples, and the page asks no other host for anything.
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from '../dist-tools/playwright.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  deref,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  loadDocument,
} from '../support/mock-internals.js';
import { blockOutsideRequests, launchChromium, recordCspViolations, type SuiteBrowser } from './support/chromium.js';
import { serveFiles, type StaticServer } from './support/static-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = fileURLToPath(new URL('../../dist/docs/index.html', import.meta.url));
const SCREENSHOT = fileURLToPath(new URL('../../dist/docs/screenshot.png', import.meta.url));
const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));

/** The value of the first example of the first media type of a request body or response. */
function firstExample(holder: Json | undefined, location: string): Json | undefined {
  const resolved = deref(doc, holder, location).value;
  if (!isObject(resolved) || !isObject(resolved.content)) return undefined;
  const media = Object.values(resolved.content)[0];
  if (!isObject(media)) return undefined;
  if (isObject(media.examples)) {
    const example = deref(doc, Object.values(media.examples)[0], location).value;
    return isObject(example) ? example.value : undefined;
  }
  return media.example;
}

/** Lines of an example as Redoc's samples show them: `"key": value` for each top-level scalar. */
function fragments(value: Json | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string')
    return [
      value
        .split('\n')
        .find((line) => line.trim() !== '')
        ?.trim() ?? '',
    ];
  if (Array.isArray(value)) return fragments(value[0]);
  if (!isObject(value)) return [JSON.stringify(value)];
  return Object.entries(value)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .map(([k, v]) => `"${k}": ${JSON.stringify(v)}`);
}

interface Expected {
  operationId: string;
  /** Redoc's id of the operation's section, such as `repository/repoedithook`. */
  section: string;
  texts: string[];
}

const expected: Expected[] = listOperations(doc).map(({ path, method, operation, location }) => {
  const op = operation as JsonObject & { operationId: string; summary: string; tags: string[]; responses: JsonObject };
  const success =
    Object.keys(op.responses)
      .filter((code) => code.startsWith('2'))
      .sort()[0] ?? '';
  return {
    operationId: op.operationId,
    section: `${op.tags[0]}/${op.operationId.toLowerCase()}`,
    texts: [
      op.summary,
      method.toUpperCase(),
      path,
      ...fragments(firstExample(op.requestBody, `${location}/requestBody`)),
      ...fragments(firstExample(op.responses[success], `${location}/responses/${success}`)),
    ],
  };
});

/** Whether dist/docs/index.html is missing or older than anything it is made from. */
async function docsAreStale(): Promise<boolean> {
  const built = await stat(DOCS).then(
    (stats) => stats.mtimeMs,
    () => -1,
  );
  const sources = await Promise.all(
    ['openapi.yaml', 'redocly.yaml', 'scripts/docs.mjs', 'package-lock.json'].map((path) => stat(join(ROOT, path))),
  );
  return sources.some((source) => source.mtimeMs > built);
}

function cspViolations(on: Page): Promise<string[]> {
  return on.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
}

let browser: SuiteBrowser;
let context: BrowserContext;
let page: Page;
let server: StaticServer;
let guard: { outside: string[]; seen: string[] };

beforeAll(async () => {
  // The test checks what the current document and script produce: it builds the docs unless
  // `npm test`'s pretest has just built them from these very sources.
  if (await docsAreStale()) await promisify(execFile)(process.execPath, ['scripts/docs.mjs'], { cwd: ROOT });
  server = await serveFiles({ '/': { type: 'text/html; charset=utf-8', body: await readFile(DOCS) } });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  guard = await blockOutsideRequests(context);
  await recordCspViolations(context);
  page = await context.newPage();
  await page.goto(`${server.origin}/`, { waitUntil: 'load' });
}, 60_000);

afterEach(async () => {
  // Nothing reached for another host: not past the route, and not refused by the page's policy
  // (a request the policy refuses never reaches the route).
  expect(guard.outside).toEqual([]);
  expect(await cspViolations(page)).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the reference docs in Chromium', () => {
  it('lists the twenty operations of the document', () => {
    expect(expected).toHaveLength(20);
  });

  it('loads the page through the guard', () => {
    expect(guard.seen).toContain(`${server.origin}/`);
  });

  it.each(expected)('$operationId: summary, method, path and examples render', async ({ section, texts }) => {
    await page.goto(`${server.origin}/#/${section}`);
    // What the section does not show (yet): Redoc renders the sections near the one in view.
    const missing = (): Promise<string[]> =>
      page.evaluate(
        ([id, wanted]) => {
          const text = (document.getElementById(id) as HTMLElement | null)?.textContent ?? '';
          return wanted.filter((line) => !text.includes(line));
        },
        [section, texts] as const,
      );
    await expect.poll(missing, { timeout: 10_000 }).toEqual([]);
  });

  it('searches offline', async () => {
    const fresh = await context.newPage();
    // A section that only the page's script renders: once it shows, the page is live.
    await fresh.goto(`${server.origin}/#/admin/admingetallorgs`, { waitUntil: 'load' });
    await fresh.locator('[id="admin/admingetallorgs"]').waitFor();
    await fresh.keyboard.press('Control+k');
    await fresh.keyboard.type('webhook');
    await fresh
      .locator('[data-component-name="Search/SearchItem"]', { hasText: 'Edit a repository webhook' })
      .waitFor({ timeout: 10_000 });
    expect(await cspViolations(fresh)).toEqual([]);
    await fresh.close();
  });

  it('saves a screenshot of an operation', async () => {
    await page.goto(`${server.origin}/#/repository/repoedithook`);
    await page.getByRole('heading', { name: 'Edit a repository webhook' }).first().waitFor();
    const png = await page.screenshot({ path: SCREENSHOT });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });
});
