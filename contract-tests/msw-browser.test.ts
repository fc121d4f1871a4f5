// `gitea-mock/msw`'s browser build (mock/dist/msw.browser.mjs) as a frontend app ships it: bundled
// by esbuild for the browser, which must find no Node built-in to import, then run in a V8 context
// that holds the web platform's globals and none of Node's (`process`, `Buffer`, `global`,
// `setImmediate`, `require`). There, each of the document's operations, through the examples and
// through the sandbox, must answer as the Node build does, and release attachments named with RFC
// 2231's `filename*=UTF-8''…` must be stored under the names they decode to.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInContext, type Context } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { getResponse } from 'msw';
import { beforeAll, describe, expect, it } from 'vitest';
import { listOperations, loadDocument } from '../test/support/mock-internals.js';
import { exampleRequest } from './support/http.js';
import {
  runScenario,
  type ScenarioAnswer,
  type ScenarioInput,
  type ScenarioRequest,
  type ScenarioResult,
} from './support/msw-scenario.js';
import { runScript, webContext } from './support/web-context.js';

type MswModule = typeof import('../mock/src/msw/handlers.js');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NODE_BUILD = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));

/** The app: MSW's getResponse and `gitea-mock/msw`, resolved by esbuild for the browser, around the shared scenario. */
const APP = `
import { getResponse } from 'msw';
import { createGiteaHandlers } from 'gitea-mock/msw';
import { runScenario } from './contract-tests/support/msw-scenario.ts';
export const run = (input) => runScenario(createGiteaHandlers, getResponse, input);
`;

const BASE = 'https://gitea.example.org/api/v1';
const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));

const TOKEN = { authorization: 'token browser-build' };
const JSON_BODY = { ...TOKEN, 'content-type': 'application/json' };
const encode = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

/** A release attachment upload whose file part has the Content-Disposition parameters `file`. */
function upload(label: string, file: string): ScenarioRequest {
  const body = `--XyZ\r\nContent-Disposition: form-data; name=attachment; ${file}\r\n\r\nsome bytes\r\n--XyZ--\r\n`;
  return {
    label,
    method: 'POST',
    path: '/repos/acme/rocket/releases/14001/assets',
    headers: { ...TOKEN, 'content-type': 'multipart/form-data; boundary=XyZ' },
    body: encode(body),
  };
}

const UPLOADS = [
  upload('an RFC 2231 file name in UTF-8', `filename*=UTF-8''na%C3%AFve%20%E2%9C%93.txt`),
  upload('an RFC 2231 file name that is no UTF-8', `filename*=UTF-8''%ff%fe%e2%9c.txt`),
  upload('an RFC 2231 file name beside a plain one', `filename="plain.txt"; filename*=UTF-8''r%C3%A4k.txt`),
];

/** Requests the front refuses or answers on its own: credentials, validation, the error dialect, `Prefer`. */
const REFUSALS: ScenarioRequest[] = [
  { label: 'no credentials', method: 'GET', path: '/repos/acme/rocket/keys/11001', headers: {} },
  {
    label: 'a value no enum allows',
    method: 'PUT',
    path: '/repos/acme/rocket/collaborators/bob',
    headers: JSON_BODY,
    body: encode('{"permission":"owner"}'),
  },
  {
    label: 'malformed JSON',
    method: 'PATCH',
    path: '/repos/acme/rocket/hooks/4001',
    headers: JSON_BODY,
    body: encode('{not'),
  },
  {
    label: 'Prefer: code=404',
    method: 'GET',
    path: '/repos/acme/rocket/keys/11001',
    headers: { ...TOKEN, prefer: 'code=404' },
  },
  { label: 'a path the document lacks', method: 'GET', path: '/repos/acme/rocket/wiki', headers: TOKEN },
  {
    label: 'a multipart body cut short',
    method: 'POST',
    path: '/repos/acme/rocket/releases/14001/assets',
    headers: { ...TOKEN, 'content-type': 'multipart/form-data; boundary=XyZ' },
    body: encode('--XyZ\r\nContent-Disposition: form-data; name=attachment; filename=a.txt\r\n\r\nsome'),
  },
];

/** Every operation with the document's own examples, then the refusals and the uploads. */
async function scenarioInput(): Promise<ScenarioInput> {
  const requests: ScenarioRequest[] = [];
  for (const op of listOperations(doc)) {
    const { url, method, headers, body } = await exampleRequest(doc, BASE, op);
    requests.push({
      label: String(op.operation.operationId),
      method,
      path: `${url.pathname.slice(new URL(BASE).pathname.length)}${url.search}`,
      headers,
      ...(body ? { body: Uint8Array.from(body) } : {}),
    });
  }
  return {
    examplesBase: BASE,
    sandboxBase: 'https://sandbox.example.org/api/v1',
    requests: [...requests, ...REFUSALS, ...UPLOADS],
  };
}

let bundle: { inputs: string[]; builtins: string[] };
let context: Context;
let input: ScenarioInput;
let browser: ScenarioResult;
let node: ScenarioResult;

// Both builds start their validators and sandbox and answer every request: a wider bound than the default, for a busy machine.
beforeAll(async () => {
  const result = await build({
    stdin: { contents: APP, resolveDir: ROOT, sourcefile: 'app.js', loader: 'js' },
    bundle: true,
    platform: 'browser',
    // A classic script, as a context runs one; `app` holds the entry's exports.
    format: 'iife',
    globalName: 'app',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // As an app's build resolves `gitea-mock/msw`: the package's browser build, not this repository's path alias.
    tsconfigRaw: {},
  });
  const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
  const imports = Object.values(result.metafile.inputs).flatMap((each) => each.imports.map(({ path }) => path));
  bundle = {
    inputs: Object.keys(result.metafile.inputs),
    builtins: imports.filter((path) => path.startsWith('node:') || builtins.has(path)),
  };
  context = webContext();
  runScript(context, result.outputFiles[0]!.text, 'app.js');
  input = await scenarioInput();
  const { run } = (context as { app: { run(input: ScenarioInput): Promise<ScenarioResult> } }).app;
  // Read back as JSON: the answers are objects of the context's own realm.
  browser = JSON.parse(JSON.stringify(await run(input))) as ScenarioResult;
  const { createGiteaHandlers } = (await import(NODE_BUILD)) as MswModule;
  node = await runScenario(createGiteaHandlers, getResponse, input);
}, 120_000);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
const SECRET = /"gto_[a-z0-9]+"/g;
const SINCE = new Date(Date.now() - 3_600_000).toISOString();

/** `body` with what a sandbox makes afresh for each record (UUIDs, secrets, the time of a write) named instead. */
function withoutFreshValues(body: string): string {
  return body
    .replace(UUID, '<uuid>')
    .replace(SECRET, '"<secret>"')
    .replace(/"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"/g, (quoted, time: string) => (time >= SINCE ? '"<now>"' : quoted));
}

const answerOf = (result: ScenarioResult, source: string, label: string): ScenarioAnswer | undefined =>
  result.answers.find((answer) => answer.source === source && answer.label === label);

describe("gitea-mock/msw's browser build without Node's globals", () => {
  it('bundles for the browser from its `browser` build alone, importing no Node built-in', () => {
    expect(bundle.builtins).toEqual([]);
    expect(bundle.inputs).toContain('mock/dist/msw.browser.mjs');
    expect(
      bundle.inputs.filter((each) => each.startsWith('mock/dist/') && each !== 'mock/dist/msw.browser.mjs'),
    ).toEqual([]);
  });

  it('runs where process, Buffer, global, setImmediate and require are not defined', () => {
    const kinds = runInContext(
      '[typeof process, typeof Buffer, typeof global, typeof setImmediate, typeof require, typeof fetch]',
      context,
    ) as string[];
    expect([...kinds]).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'function']);
    expect(browser.warnings).toEqual([]);
  });

  it("stores uploads named with RFC 2231's filename* under the names they decode to", () => {
    const names = UPLOADS.map(({ label }) => {
      const answer = answerOf(browser, 'sandbox', label);
      return [
        answer?.status,
        answer?.status === 201 ? (JSON.parse(answer.body) as { name: string }).name : answer?.body,
      ];
    });
    expect(names).toEqual([
      [201, 'naïve ✓.txt'],
      [201, '\ufffd\ufffd\ufffd\ufffd.txt'],
      [201, 'räk.txt'],
    ]);
    expect(UPLOADS.map(({ label }) => answerOf(browser, 'examples', label)?.status)).toEqual([201, 201, 201]);
  });

  it('refuses in the dialect of the service what the front refuses', () => {
    expect(REFUSALS.map(({ label }) => answerOf(browser, 'examples', label)?.status)).toEqual([
      401, 422, 422, 404, 404, 400,
    ]);
  });

  it.each(['examples', 'sandbox'])('answers every operation through the %s as the Node build does', (source) => {
    const labels = input.requests.map(({ label }) => label);
    expect(labels).toHaveLength(20 + REFUSALS.length + UPLOADS.length);
    const stable = (answer: ScenarioAnswer | undefined) =>
      answer && { ...answer, body: withoutFreshValues(answer.body) };
    const differing = labels.filter(
      (label) =>
        JSON.stringify(stable(answerOf(browser, source, label))) !==
        JSON.stringify(stable(answerOf(node, source, label))),
    );
    expect(differing.map((label) => [answerOf(browser, source, label), answerOf(node, source, label)])).toEqual([]);
    expect(node.warnings).toEqual([]);
  });
});

describe('what the browser build weighs in an app bundle', () => {
  it('is what docs/msw.md says, to within a tenth: minified, and gzipped at level 9', async () => {
    const text = readFileSync(join(ROOT, 'docs/msw.md'), 'utf8');
    const stated = /about ([\d.]+) MiB minified, (\d+) KiB gzipped/.exec(text);
    expect(stated).not.toBeNull();
    const result = await build({
      stdin: { contents: "export { createGiteaHandlers } from 'gitea-mock/msw';", resolveDir: ROOT, loader: 'js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      external: ['msw'],
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.contents;
    const within = (bytes: number, figure: number) => expect(Math.abs(bytes / figure - 1)).toBeLessThan(0.1);
    within(code.length, Number(stated![1]) * 1024 * 1024);
    within(gzipSync(code, { level: 9 }).length, Number(stated![2]) * 1024);
  });
});
