// The package as a user gets it: the build's outputs, `npm run docs` and `npm pack` in a clean
// copy of this repository, the tarball installed into a fresh project, and there imported,
// type-checked and its `gitea-mock` bin started.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch } from '../../contract-tests/support/launch.js';
import { startMockServer } from '../../scripts/mock/server.js';

const { OUTPUTS, staleReason } = (await import('../../scripts/build-if-stale.mjs' as string)) as { OUTPUTS: string[]; staleReason(root: string): string | undefined };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = promisify(execFile);

/** Left out of the copy: installed packages, build output and history. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.vitest-cache']);

/** What the tarball must hold; generated/README.md and further mock chunks may come along. */
const REQUIRED = [
  'package.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'openapi.yaml',
  'generated/api.d.ts',
  'generated/operation-ids.ts',
  'dist/index.js',
  'dist/index.cjs',
  'dist/index.d.ts',
  'dist/index.d.cts',
  'dist/mock/cli.mjs',
  'dist/mock/server.mjs',
  'dist/mock/proxy.mjs',
  'dist/mock/world-store.mjs',
  'dist/mock/runtime.mjs',
  'dist/mock/yaml.mjs',
  'dist/mock/yaml-loader.mjs',
  'dist/openapi.json',
];
const ALLOWED = [...REQUIRED, 'generated/README.md'];

/** The environment without what `npm test` passes down about this project (prefixes, package fields). */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_package_|npm_lifecycle_|npm_config_(local_|global_)?prefix$|INIT_CWD$)/i.test(name)),
  );
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run(NPM, args, { cwd, env: npmEnv(), maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

let stage: string;
let app: string;
let packed: string[];

beforeAll(async () => {
  stage = await mkdtemp(join(tmpdir(), 'gitea-contract-pack-'));
  const pkg = join(stage, 'package');
  app = join(stage, 'app');
  // A clean copy, so the tarball holds what the scripts make now and nothing an earlier build left:
  // the build's own outputs, which the global setup has just brought up to date (the list is held
  // to what tsdown writes by test/build-if-stale.test.ts), and the documents `npm run docs` makes.
  await cp(ROOT, pkg, { recursive: true, filter: (source) => !NOT_COPIED.has(relative(ROOT, source).split(sep)[0] ?? '') && !source.endsWith('.tgz') });
  await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  expect(staleReason(ROOT)).toBeUndefined();
  for (const output of OUTPUTS) await cp(join(ROOT, output), join(pkg, output));
  await npm(['run', '-s', 'docs'], pkg);
  const [result] = JSON.parse(await npm(['pack', '--json', '--pack-destination', stage], pkg)) as { filename: string; files: { path: string }[] }[];
  packed = result!.files.map((file) => file.path);
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // As a user installs it, with npm's cache first: `npm ci` cached the tarballs but not the
  // registry's metadata, so with an empty cache this asks the registry, and offline it still works
  // where an earlier install left both behind.
  await npm(['install', join(stage, result!.filename), '--no-audit', '--no-fund', '--prefer-offline'], app);
}, 240_000);

afterAll(async () => {
  if (stage) await rm(stage, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('holds the client, the mock, both documents, the generated types, README, LICENSE and CHANGELOG, and nothing else', () => {
    expect(packed.filter((path) => !ALLOWED.includes(path))).toEqual([]);
    expect(packed).toEqual(expect.arrayContaining(REQUIRED));
  });
});

describe('the installed package', () => {
  it('imports as ESM and calls the mock through the installed client', async () => {
    const mock = await startMockServer({ port: 0 });
    try {
      await writeFile(
        join(app, 'call.mjs'),
        `import { collectAll, createGiteaClient, unwrap } from 'gitea-contract';
const gitea = createGiteaClient({ baseUrl: process.env.GITEA_BASE_URL, auth: { token: 'x' } });
const key = await unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }));
const orgs = await collectAll(gitea, '/admin/orgs', { params: { query: { limit: 2 } } });
console.log(JSON.stringify({ from: import.meta.resolve('gitea-contract'), key: key.id, orgs: orgs.length }));
`,
      );
      const { stdout } = await run(process.execPath, ['call.mjs'], { cwd: app, env: { ...process.env, GITEA_BASE_URL: mock.baseUrl } });
      expect(JSON.parse(stdout)).toEqual({ from: `file://${join(app, 'node_modules/gitea-contract/dist/index.js')}`, key: 11001, orgs: 5 });
    } finally {
      await mock.close();
    }
  });

  it('requires as CommonJS, with both documents exported', async () => {
    await writeFile(
      join(app, 'call.cjs'),
      `const { createGiteaClient } = require('gitea-contract');
const spec = require('gitea-contract/openapi.json');
const operations = Object.values(spec.paths).flatMap((item) => Object.values(item)).filter((op) => op.operationId);
console.log(JSON.stringify({ from: require.resolve('gitea-contract'), client: typeof createGiteaClient, openapi: spec.openapi, operations: operations.length, yaml: require.resolve('gitea-contract/openapi.yaml') }));
`,
    );
    const { stdout } = await run(process.execPath, ['call.cjs'], { cwd: app });
    const installed = join(app, 'node_modules/gitea-contract');
    expect(JSON.parse(stdout)).toEqual({ from: join(installed, 'dist/index.cjs'), client: 'function', openapi: '3.1.0', operations: 20, yaml: join(installed, 'openapi.yaml') });
  });

  it.each([
    ['node16', { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ])('type-checks a consumer with moduleResolution %s', async (name, resolution) => {
    await writeFile(
      join(app, 'consumer.ts'),
      `import { createGiteaClient, unwrap, type DeployKey } from 'gitea-contract';

const gitea = createGiteaClient({ baseUrl: 'http://127.0.0.1:4010/api/v1', auth: { token: 'x' } });

export async function keyTitle(): Promise<string> {
  const key: DeployKey = await unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }));
  return key.title ?? '(untitled)';
}

// The types are the contract's, not \`any\`: each call below must fail to compile.
export function mistakes(): void {
  // @ts-expect-error: the contract has no such path
  void gitea.GET('/repos/{owner}/{repo}/keyz/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } });
  // @ts-expect-error: id is a number
  void gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 'one' } } });
}
`,
    );
    const config = { compilerOptions: { ...resolution, target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['consumer.ts'] };
    await writeFile(join(app, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
    const result = await run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`], { cwd: app }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout || String(error),
    );
    expect(result).toBe('');
  });

  it('starts the installed gitea-mock bin, which answers', async () => {
    const mock = await launch(join(app, 'node_modules/.bin/gitea-mock'), ['--port', '0', '--quiet']);
    try {
      const response = await fetch(`${mock.baseUrl}/admin/orgs?limit=2`, { headers: { authorization: 'token x' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-total-count')).toBe('5');
      expect(((await response.json()) as unknown[]).length).toBe(2);
    } finally {
      expect(await mock.stop()).toBe(0);
    }
  });
});
