// The two packages as users get them: `npm pack` of each in a clean copy of this repository that
// holds the build's current outputs and nothing an earlier build left, each tarball installed into
// a fresh project with the README's install commands, as an app that wants the client and a
// project that runs the mock do. The client app gets three packages; the mock project keeps the
// client among its dependencies and the mock among its development ones, runs `gitea-mock` (the
// sandbox and live mode) and the installed client against it; consumers type-check under
// TypeScript 5.9 and 7. Neither manifest holds a script that npm runs when it installs a package.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, type Launched } from '../../contract-tests/support/launch.js';
import { SEED_IDS } from '../../contract-tests/support/seed-ids.js';
import { startMockServer } from '../../mock/src/server.js';
import { documentedBlocks } from '../support/code-blocks.js';
import { cleanCopy, npm } from '../support/scratch-repo.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
/** The TypeScript 7 consumers get from `npm i typescript` today: a development dependency of ours under another name. */
const TSC_7 = join(ROOT, 'node_modules/typescript-7/bin/tsc');
const TYPESCRIPT_7 = '7.0.2';
const run = promisify(execFile);
const { OUTPUTS, staleReason } = (await import(join(ROOT, 'scripts/build-if-stale.mjs') as string)) as {
  OUTPUTS: string[];
  staleReason(root: string): string | undefined;
};

/** What each tarball must hold, and what else it may. */
const CLIENT = {
  required: [
    'package.json',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'openapi.yaml',
    'generated/api.d.ts',
    'generated/operation-ids.ts',
    'generated/profiles.ts',
    'dist/index.js',
    'dist/index.cjs',
    'dist/index.d.ts',
    'dist/index.d.cts',
    'dist/internal.js',
    'dist/internal.cjs',
    'dist/internal.d.ts',
    'dist/internal.d.cts',
    'internal/package.json',
    'dist/openapi.json',
  ],
  allowed: ['generated/README.md'],
};
const MOCK = {
  required: [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/cli.mjs',
    'dist/document.json',
    'dist/server.mjs',
    'dist/server.d.mts',
    'dist/msw.mjs',
    'dist/msw.d.mts',
    'dist/msw.browser.mjs',
    'dist/msw.browser.licenses.txt',
    'dist/serve.mjs',
    'dist/verify.mjs',
    'dist/proxy.mjs',
    'dist/markdown-worker.mjs',
    'dist/profiles/gitea-1.27.json',
    'dist/profiles/forgejo-11.json',
  ],
  // Further chunks of the build, and of its type declarations.
  allowed: [/^dist\/[\w-]+\.mjs$/, /^dist\/[\w-]+\.d\.mts$/, /^dist\/profiles\/[\w.-]+\.json$/],
};

/**
 * The README's commands that install the two tarballs, as npm's arguments, in the README's order:
 * the lines of its `sh` block that names the mock's tarball.
 */
function readmeInstalls(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .map(([, code]) => code!)
    .find((code) => code.includes('gitea-mock-0.1.0.tgz'));
  expect(block).toBeDefined();
  return block!
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => {
      const [command, ...args] = line.split(/\s+/);
      expect(command).toBe('npm');
      return args;
    });
}

/** A fresh project in `folder`, the tarballs beside its package.json, and `commands` run in it as a user runs them. */
async function project(folder: string, tarballs: string[], commands: string[][]): Promise<void> {
  await mkdir(folder);
  await writeFile(join(folder, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await Promise.all(tarballs.map((tarball) => copyFile(tarball, join(folder, basename(tarball)))));
  for (const args of commands) await npm([...args, '--no-audit', '--no-fund', '--prefer-offline'], folder);
}

/** The packages below `folder`'s node_modules, as `npm ls` lists them (its own folder left out). */
async function installed(folder: string, args: string[] = []): Promise<string[]> {
  const listed = (await npm(['ls', '--all', '--parseable', ...args], folder)).trim().split('\n').slice(1);
  return listed.map((path) => relative(join(folder, 'node_modules'), path)).sort();
}

/** The package.json of a tarball, as npm reads it when it installs the package. */
async function manifestOf(tarball: string): Promise<{ scripts?: Record<string, string> }> {
  const { stdout } = await run('tar', ['-xOzf', tarball, 'package/package.json'], { maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout) as { scripts?: Record<string, string> };
}

/** The scripts npm runs when it installs a package from its tarball (`prepare` too, for one that is not from a registry). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/** Bytes of every file below `path`. */
async function size(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await size(join(path, entry));
  return total;
}

/** The msw a frontend project has next to gitea-mock (its peer). */
const MSW = '2.15.0';

/** Each TypeScript and each kind of module resolution a consumer may use. */
const COMPILERS = [
  ['5.9', 'node16', { module: 'node16', moduleResolution: 'node16' }],
  ['5.9', 'bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ['7', 'node16', { module: 'node16', moduleResolution: 'node16' }],
  ['7', 'bundler', { module: 'esnext', moduleResolution: 'bundler' }],
] as const;

/**
 * The errors of `files` compiled in `folder` as a strict project does, with TypeScript's own
 * default of checking every declaration file (no skipLibCheck); '' when there are none.
 */
async function typeCheck(
  folder: string,
  [version, name, resolution]: (typeof COMPILERS)[number],
  files: string[],
  types: string[] = [],
): Promise<string> {
  const config = {
    compilerOptions: {
      ...resolution,
      target: 'es2022',
      lib: ['es2022', 'dom', 'dom.iterable'],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types,
    },
    files,
  };
  const file = `tsconfig.${version}.${name}.json`;
  await writeFile(join(folder, file), JSON.stringify(config, null, 2));
  const tsc = version === '7' ? TSC_7 : TSC;
  const { stdout: reported } = await run(process.execPath, [tsc, '--version']);
  expect(reported).toMatch(version === '7' ? `Version ${TYPESCRIPT_7}` : /^Version 5\.9\./);
  return run(process.execPath, [tsc, '-p', file], { cwd: folder }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout || String(error),
  );
}

let stage: string;
/** An app that wants the client, and a project that runs the mock (with the client next to it). */
let app: string;
let mockProject: string;
let packed: { client: string[]; mock: string[] };
let tarballs: { client: string; mock: string };
/** What the mock project held after the README's two installs, before msw came in. */
let mockPackages: string[];

beforeAll(async () => {
  stage = await mkdtemp(join(tmpdir(), 'gitea-contract-pack-'));
  const repo = join(stage, 'repo');
  app = join(stage, 'app');
  mockProject = join(stage, 'mock-project');
  // A clean copy without any build output: what a fresh clone has after `npm ci`.
  await cleanCopy(ROOT, repo);
  await symlink(join(ROOT, 'node_modules'), join(repo, 'node_modules'), 'dir');
  // Then the build's own outputs, which pretest or the global setup has just brought up to date
  // (test/build-if-stale.test.ts holds the list to what tsdown writes), and the bundled document,
  // which `npm run docs` writes in pretest: what each package's `prepack` makes, without making it again.
  expect(staleReason(ROOT)).toBeUndefined();
  await Promise.all([...OUTPUTS, 'dist/openapi.json'].map((output) => cp(join(ROOT, output), join(repo, output))));
  const pack = async (args: string[]): Promise<{ filename: string; files: string[] }> => {
    const output = await npm(['pack', ...args, '--ignore-scripts', '--json', '--pack-destination', stage], repo);
    const [result] = JSON.parse(output) as { filename: string; files: { path: string }[] }[];
    return { filename: join(stage, result!.filename), files: result!.files.map((file) => file.path) };
  };
  const [client, mock] = await Promise.all([pack([]), pack(['-w', 'gitea-mock'])]);
  packed = { client: client.files, mock: mock.files };
  tarballs = { client: client.filename, mock: mock.filename };
  const installs = readmeInstalls();
  expect(installs).toEqual([
    ['install', './gitea-contract-0.1.0.tgz'],
    ['install', '--save-dev', './gitea-mock-0.1.0.tgz'],
  ]);
  await Promise.all([
    project(app, [client.filename], installs.slice(0, 1)),
    (async () => {
      await project(mockProject, [client.filename, mock.filename], installs);
      mockPackages = await installed(mockProject);
      // The MSW section's peer, beside the mock.
      await npm(['install', '--save-dev', `msw@${MSW}`, '--no-audit', '--no-fund', '--prefer-offline'], mockProject);
    })(),
  ]);
}, 240_000);

afterAll(async () => {
  if (stage) await rm(stage, { recursive: true, force: true });
});

describe('npm pack', () => {
  it.each([
    ['gitea-contract', 'client', CLIENT],
    ['gitea-mock', 'mock', MOCK],
  ] as const)('%s holds what it must and nothing else', (_name, key, { required, allowed }) => {
    const files = packed[key];
    expect(
      files.filter(
        (path) =>
          !required.includes(path) &&
          !allowed.some((allow) => (typeof allow === 'string' ? allow === path : allow.test(path))),
      ),
    ).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(required));
  });
});

describe('the manifests npm installs', () => {
  it.each(['client', 'mock'] as const)('%s: no script npm runs at install time', async (key) => {
    const { scripts = {} } = await manifestOf(tarballs[key]);
    expect(INSTALL_SCRIPTS.filter((name) => name in scripts)).toEqual([]);
  });
});

describe("the README's install commands", () => {
  it('leave gitea-contract among the dependencies and put gitea-mock among the development ones', async () => {
    const manifest = async (folder: string) => JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'));
    expect((await manifest(app)).dependencies).toEqual({ 'gitea-contract': 'file:gitea-contract-0.1.0.tgz' });
    const mock = await manifest(mockProject);
    expect(mock.dependencies).toEqual({ 'gitea-contract': 'file:gitea-contract-0.1.0.tgz' });
    expect(mock.devDependencies).toEqual({ 'gitea-mock': 'file:gitea-mock-0.1.0.tgz', msw: `^${MSW}` });
    // What a deployment with --omit=dev keeps: the client.
    expect(await installed(mockProject, ['--omit=dev'])).toEqual([
      'gitea-contract',
      'openapi-fetch',
      'openapi-typescript-helpers',
    ]);
  });

  it("bring, for the mock, the README's count of packages to within a tenth", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const stated = /about (\d+) packages in a fresh project, the client's three among them/.exec(readme);
    expect(stated).not.toBeNull();
    expect(mockPackages).toEqual(expect.arrayContaining(['gitea-contract', 'gitea-mock', 'openapi-fetch']));
    expect(Math.abs(mockPackages.length / Number(stated![1]) - 1)).toBeLessThan(0.1);
  });
});

describe('the client installed alone', () => {
  it('brings three packages in under 3 MiB: itself, openapi-fetch and its helper types', async () => {
    expect(await installed(app)).toEqual(['gitea-contract', 'openapi-fetch', 'openapi-typescript-helpers']);
    // The document three times (openapi.yaml, openapi.json, generated types), each about 0.4 MB with
    // every one of the 26 webhook event types and their examples, and the client's few kilobytes.
    expect(await size(join(app, 'node_modules'))).toBeLessThan(3 * 1024 * 1024);
  });

  it('imports as ESM and calls the mock through the installed client; without /api/v1 the error says so', async () => {
    const mock = await startMockServer({ port: 0 });
    try {
      await writeFile(
        join(app, 'call.mjs'),
        `import { collectAll, createGiteaClient, unwrap } from 'gitea-contract';
const gitea = createGiteaClient({ baseUrl: process.env.GITEA_BASE_URL, auth: { token: 'x' } });
const key = await unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }));
const orgs = await collectAll(gitea, '/admin/orgs', { params: { query: { limit: 2 } } });
// The most common first mistake: the server's address alone.
const origin = createGiteaClient({ baseUrl: new URL(process.env.GITEA_BASE_URL).origin, auth: { token: 'x' } });
const { error } = await origin.GET('/admin/orgs');
console.log(JSON.stringify({ from: import.meta.resolve('gitea-contract'), key: key.id, orgs: orgs.length, mistake: error.message }));
`,
      );
      const { stdout } = await run(process.execPath, ['call.mjs'], {
        cwd: app,
        env: { ...process.env, GITEA_BASE_URL: mock.baseUrl },
      });
      expect(JSON.parse(stdout)).toEqual({
        from: `file://${join(app, 'node_modules/gitea-contract/dist/index.js')}`,
        key: 11001,
        orgs: 5,
        mistake: `GET /admin/orgs (adminGetAllOrgs): 404 not found; the base URL ${mock.origin} does not end in /api/v1, where Gitea serves its API: try ${mock.origin}/api/v1`,
      });
    } finally {
      await mock.close();
    }
  });

  it('requires as CommonJS in a "type": "commonjs" project, with both documents, and calls the mock through it', async () => {
    // npm's default project type, as plain-JS bots and Jest use it.
    const bot = join(app, 'bot');
    await mkdir(bot);
    await writeFile(join(bot, 'package.json'), JSON.stringify({ name: 'bot', private: true, type: 'commonjs' }));
    await writeFile(
      join(bot, 'index.js'),
      `const { collectAll, createGiteaClient, unwrap } = require('gitea-contract');
const spec = require('gitea-contract/openapi.json');
const operations = Object.values(spec.paths).flatMap((item) => Object.values(item)).filter((op) => op.operationId);
const gitea = createGiteaClient({ baseUrl: process.env.GITEA_BASE_URL, auth: { token: 'x' } });
(async () => {
  const key = await unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }));
  const orgs = await collectAll(gitea, '/admin/orgs', { params: { query: { limit: 2 } } });
  console.log(JSON.stringify({ from: require.resolve('gitea-contract'), key: key.id, orgs: orgs.length, openapi: spec.openapi, operations: operations.length, yaml: require.resolve('gitea-contract/openapi.yaml') }));
})();
`,
    );
    const mock = await startMockServer({ port: 0 });
    try {
      const { stdout } = await run(process.execPath, ['index.js'], {
        cwd: bot,
        env: { ...process.env, GITEA_BASE_URL: mock.baseUrl },
      });
      const installed = join(app, 'node_modules/gitea-contract');
      expect(JSON.parse(stdout)).toEqual({
        from: join(installed, 'dist/index.cjs'),
        key: 11001,
        orgs: 5,
        openapi: '3.1.0',
        operations: 20,
        yaml: join(installed, 'openapi.yaml'),
      });
    } finally {
      await mock.close();
    }
  });

  // The consumer the compilers check, written once for all of them.
  beforeAll(async () => {
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
  });

  // Four compilers at once, each bound against a hang (not a timing: TypeScript 5.9 checking every
  // declaration takes 5 s alone, and minutes on a machine busy with other work). Every resolution mode's view of the types (node10, node16 as ESM and
  // as CommonJS, bundler) is checked by attw in pretest; here the consumer's code must compile
  // against them, under each TypeScript and each kind of resolution.
  it.concurrent.for(COMPILERS)(
    'type-checks a consumer under TypeScript %s with moduleResolution %s',
    { timeout: 600_000 },
    async (compiler, { expect }) => {
      expect(await typeCheck(app, compiler, ['consumer.ts'])).toBe('');
    },
  );
});

describe('the mock installed next to it', () => {
  let mock: Launched;
  beforeAll(async () => {
    mock = await launch(join(mockProject, 'node_modules/.bin/gitea-mock'), ['sandbox', '--port', '0', '--quiet']);
  });
  afterAll(async () => {
    expect(await mock.stop()).toBe(0);
  });

  it('`gitea-mock sandbox` answers and remembers a write made through the installed client', async () => {
    await writeFile(
      join(mockProject, 'rename.mjs'),
      `import { collectAll, createGiteaClient, unwrap } from 'gitea-contract';
const gitea = createGiteaClient({ baseUrl: process.env.GITEA_BASE_URL, auth: { token: 'packaged' } });
await unwrap(gitea.POST('/admin/users/{username}/rename', { params: { path: { username: 'bob' } }, body: { new_username: 'robert' } }));
const members = await collectAll(gitea, '/teams/{id}/members', { params: { path: { id: 12001 } } });
console.log(JSON.stringify(members.map((user) => user.login)));
`,
    );
    const { stdout } = await run(process.execPath, ['rename.mjs'], {
      cwd: mockProject,
      env: { ...process.env, GITEA_BASE_URL: mock.baseUrl },
    });
    expect(JSON.parse(stdout)).toEqual(['alice', 'robert', 'carol']);
  });

  it('`gitea-mock/msw` answers the installed client in setupServer as the server does, with no port', async () => {
    await writeFile(
      join(mockProject, 'msw-check.mjs'),
      `import { setupServer } from 'msw/node';
import { createGiteaClient } from 'gitea-contract';
import { createGiteaHandlers } from 'gitea-mock/msw';
const baseUrl = 'https://gitea.example.org/api/v1';
const gitea = createGiteaHandlers({ baseUrl, sandbox: true });
const server = setupServer(...gitea.handlers);
server.listen({ onUnhandledRequest: 'error' });
const client = (token) => createGiteaClient({ baseUrl, auth: { token } });
const team = async (token) => (await client(token).GET('/teams/{id}/members', { params: { path: { id: 12001 } } })).data.map((user) => user.login);
const renamed = await client('one').POST('/admin/users/{username}/rename', { params: { path: { username: 'bob' } }, body: { new_username: 'robert' } });
const written = await team('one');
const other = await team('two');
await gitea.reset();
const afterReset = await team('one');
const anonymous = await fetch(baseUrl + '/teams/12001/members');
const invalid = await client('one').PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', { params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } }, body: { permission: 'owner' } });
const unknown = await client('one').GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 424242 } } });
console.log(JSON.stringify({ renamed: renamed.response.status, written, other, afterReset, anonymous: [anonymous.status, await anonymous.json()], invalid: [invalid.response.status, invalid.error], unknown: [unknown.response.status, unknown.error] }));
server.close();
await gitea.close();
`,
    );
    const { stdout } = await run(process.execPath, ['msw-check.mjs'], { cwd: mockProject });
    const docs = 'https://gitea.example.org/api/swagger';
    expect(JSON.parse(stdout)).toEqual({
      renamed: 204,
      written: ['alice', 'robert', 'carol'],
      other: ['alice', 'bob', 'carol'],
      afterReset: ['alice', 'bob', 'carol'],
      anonymous: [401, { message: 'token is required', url: docs }],
      invalid: [422, { message: expect.stringContaining('permission'), url: docs }],
      unknown: [404, expect.objectContaining({ message: expect.any(String), url: docs })],
    });
  });

  // The types of both entries, and every TypeScript block of the README, docs/ and the mock's
  // README as a reader copies it (test/support/code-blocks.ts finds them), compiled against the
  // installed packages. The test runner and Node's types those blocks use are the reader's own:
  // linked from this repository's install rather than installed again.
  describe('types for a strict project without skipLibCheck', () => {
    const blocks = documentedBlocks(ROOT).filter((block) => block.skip === undefined);
    const files = [
      'handlers.ts',
      'server.ts',
      ...blocks.map(({ file, line }) => `docs-blocks/${file.replace(/\W+/g, '-')}-${line}.ts`),
    ];
    beforeAll(async () => {
      await writeFile(
        join(mockProject, 'handlers.ts'),
        `import { createGiteaHandlers, type World } from 'gitea-mock/msw';
const gitea = createGiteaHandlers({ baseUrl: '/api/v1', sandbox: { prepare: (seed: World) => void seed.users.length } });
export const count: number = gitea.handlers.length;
export async function logins(): Promise<string[] | undefined> {
  return (await gitea.world({ token: 'x' }))?.users.map((user) => String(user.login));
}
// @ts-expect-error: sandbox takes options or a boolean
createGiteaHandlers({ baseUrl: '/api/v1', sandbox: 'yes' });
`,
      );
      await writeFile(
        join(mockProject, 'server.ts'),
        `import { startMockServer, type MockServer } from 'gitea-mock';
export async function operations(): Promise<string[]> {
  const mock: MockServer = await startMockServer({ port: 0, sandbox: { maxWorlds: 2 } });
  await mock.close();
  return mock.operations.map((operation) => \`\${operation.method} \${operation.path}\`);
}
`,
      );
      await mkdir(join(mockProject, 'docs-blocks'));
      // Each block a module of its own, as a file that imports something is.
      await Promise.all(
        blocks.map((block, at) => writeFile(join(mockProject, files[at + 2]!), `${block.code}\nexport {};\n`)),
      );
      // Where an installed package already brought Node's types along, they stay.
      for (const name of ['vitest', '@types/node'])
        if (!existsSync(join(mockProject, 'node_modules', name)))
          await symlink(join(ROOT, 'node_modules', name), join(mockProject, 'node_modules', name), 'dir');
    });

    it('finds the blocks: the README, docs/client.md, docs/mock.md and the MSW examples of the mock README', () => {
      expect(new Set(blocks.map(({ file }) => file))).toEqual(
        new Set(['README.md', 'docs/client.md', 'docs/mock.md', 'mock/README.md']),
      );
    });

    // Bound against a hang only: with Vitest's and MSW's declarations checked, TypeScript 5.9 takes
    // about 18 s of CPU here, TypeScript 7 about 4 s.
    it.concurrent.for(COMPILERS)(
      'compile under TypeScript %s with moduleResolution %s',
      { timeout: 600_000 },
      async (compiler, { expect }) => {
        expect(await typeCheck(mockProject, compiler, files, ['node'])).toBe('');
      },
    );
  });

  it('names live mode in its --help; `gitea-mock verify` checks the mock with no mismatch, says what it skipped and fails on it when asked', async () => {
    const bin = join(mockProject, 'node_modules/.bin/gitea-mock');
    const { stdout: help } = await run(bin, ['--help']);
    expect(help).toContain('gitea-mock verify --base-url <url> [options]');
    const env = { ...process.env, GITEA_TOKEN: 'packaged-live' };
    const { stdout } = await run(bin, ['verify', '--base-url', mock.baseUrl, ...SEED_IDS], { env });
    expect(stdout).toMatch(/^7 of 20 operations checked, 0 with mismatches$/m);
    // The README's headline command checks two reads here (the mock lists no ids): it says so,
    // and with --fail-on-skip, as the README's CI job runs it, the run fails.
    const headline = ['verify', '--base-url', mock.baseUrl, '--repo', 'acme/rocket'];
    const { stdout: partial } = await run(bin, headline, { env });
    expect(partial).toMatch(
      /^2 of 20 operations checked, 0 with mismatches\n18 not checked: 5 lacked an id or a repository \(/m,
    );
    const failed = await run(bin, [...headline, '--fail-on-skip'], { env }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/^gitea-mock verify: 5 operations could not be checked \(--fail-on-skip\): /);
    // A token given as an option: pointed at the environment, and not repeated.
    const token = await run(bin, ['verify', '--base-url', mock.baseUrl, '--token', 'packaged-SECRET-token']).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(token.code).toBe(2);
    expect(token.stderr).toMatch(/^gitea-mock verify: --token is not an option: .*set GITEA_TOKEN/);
    expect(token.stderr).not.toContain('packaged-SECRET-token');
  });
});
