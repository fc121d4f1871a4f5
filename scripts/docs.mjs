// `npm run docs`: the reference of openapi.yaml as one HTML file (dist/docs/index.html) that
// fetches nothing from another host, and the bundled dist/openapi.json the package ships. With
// `--json` (the package's prepack), the JSON only: the package leaves the HTML out.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const run = promisify(execFile);

// Redocly's CLI reports usage and checks for updates unless told not to; the docs need neither.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

// `--inlineBundle` embeds Redoc itself, but its code still names a few things to fetch: the
// "API docs by Redocly" logo, an icon set and the telemetry endpoint. Each becomes inline or inert.
const EMPTY_SVG = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>')}`;
const LOGO_SVG = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" font-weight="600" fill="#0044d4">Redocly</text></svg>',
)}`;
const REWRITES = [
  [/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, LOGO_SVG],
  // Icon URLs are built as `${base}/${style}/${name}.svg`: behind a `#` that path is a fragment.
  [/https:\/\/cdn\.redocly\.com\/icons\/[a-z]+\/[0-9.]+/g, `${EMPTY_SVG}#`],
  // Telemetry is off (REDOCLY_TELEMETRY=off); the endpoint goes too, so nothing could reach it.
  [/https:\/\/otel\.cloud\.redocly\.com\/v1\/traces/g, 'data:,'],
];

// The browser's own guarantee: whatever Redoc's code tries, only inline resources may load.
const CSP = [
  "default-src 'none'",
  // Redoc's search builds its worker with Function(); without eval it searches on the main thread.
  // Eval loads nothing: every fetch still goes through the directives below.
  "script-src 'unsafe-inline' 'unsafe-eval'",
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  'worker-src blob:',
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Problems that would make the page fetch from another host; empty when it is self-contained. */
function outsideReferences(html) {
  const problems = [];
  for (const host of ['cdn.redoc.ly', 'cdn.redocly.com', 'otel.cloud.redocly.com']) {
    if (html.includes(host)) problems.push(`still names ${host}`);
  }
  // Markup and styles that load by themselves: src, <link href>, CSS url(), module imports.
  const loaders = [
    /\ssrc\s*=\s*["']?\s*(https?:)?\/\//gi,
    /<link\b[^>]*\bhref\s*=\s*["']?\s*(https?:)?\/\//gi,
    /url\(\s*["']?\s*(https?:)?\/\//gi,
    /\bimport\s*(\(|[^;]*?\bfrom)\s*["'`](https?:)?\/\//gi,
  ];
  for (const pattern of loaders)
    for (const [match] of html.matchAll(pattern)) problems.push(`loads from outside: ${match.trim()}`);
  if (!html.includes('"disableTelemetry":true')) problems.push('telemetry is not disabled');
  if (!html.includes('http-equiv="Content-Security-Policy"')) problems.push('no Content-Security-Policy');
  return problems;
}

async function redocly(args) {
  try {
    await run(process.execPath, [REDOCLY, ...args], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`);
    throw new Error(`redocly ${args[0]} failed`);
  }
}

await mkdir(join(DIST, 'docs'), { recursive: true });
// Written next to the targets (inside dist/docs, which the package leaves out), then renamed
// into place: a reader never sees half a file, even while another build runs.
const work = await mkdtemp(join(DIST, 'docs', '.work-'));
const jsonOnly = process.argv.includes('--json');
try {
  await Promise.all([
    jsonOnly
      ? undefined
      : redocly(['build-docs', 'openapi.yaml', '--inlineBundle', '--output', join(work, 'index.html')]),
    redocly(['bundle', 'openapi.yaml', '--ext', 'json', '--output', join(work, 'openapi.json')]),
  ]);
  if (!jsonOnly) {
    let html = await readFile(join(work, 'index.html'), 'utf8');
    // Replacer functions, so that no `$` in a replacement is read as a pattern.
    for (const [pattern, replacement] of REWRITES) html = html.replace(pattern, () => replacement);
    html = html.replace(/<head>/i, () => `<head>\n  <meta http-equiv="Content-Security-Policy" content="${CSP}" />`);
    const problems = outsideReferences(html);
    if (problems.length > 0) throw new Error(`the docs would fetch from another host:\n  ${problems.join('\n  ')}`);
    await writeFile(join(work, 'index.html'), html);
    await rename(join(work, 'index.html'), join(DIST, 'docs', 'index.html'));
  }
  await rename(join(work, 'openapi.json'), join(DIST, 'openapi.json'));
} finally {
  await rm(work, { recursive: true, force: true });
}

if (jsonOnly) {
  console.log(`docs: ${relative(ROOT, join(DIST, 'openapi.json'))}`);
} else {
  const kib = Math.round((await stat(join(DIST, 'docs', 'index.html'))).size / 1024);
  console.log(
    `docs: ${relative(ROOT, join(DIST, 'docs', 'index.html'))} (${kib} KiB, self-contained) and ${relative(ROOT, join(DIST, 'openapi.json'))}`,
  );
}
