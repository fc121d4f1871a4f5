// What the README promises a newcomer before any code: the twenty operations, listed as the
// document has them; and the app that uses the kit beside the rest of Gitea's API, whose code
// block runs here as written, its requests answered by MSW: `gitea-mock/msw`'s handlers (the
// built package) for the kit's operation, a handler of the test's own for the read the kit lacks.
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { typeScriptBlocks } from './support/code-blocks.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe("the README's table of the twenty operations", () => {
  it("lists each of the document's operations once, by method and path, and nothing else", () => {
    const start = README.indexOf('## The twenty operations');
    expect(start).toBeGreaterThan(0);
    // Near the top: before the set-up, the client and the mock.
    expect(start).toBeLessThan(README.indexOf('## Set-up'));
    const section = README.slice(start, README.indexOf('\n## ', start + 1));
    const rows = [...section.matchAll(/^\| `(\w+)` \| `([^`]+)` \| (.+) \|$/gm)].map(
      ([, method, path]) => `${method} ${path}`,
    );
    const document = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8'), { maxAliasCount: -1 }) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.operationId)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toHaveLength(20);
    expect(rows.sort()).toEqual(operations.sort());
  });
});

describe('install lines of the documents', () => {
  it('never put gitea-contract among the development dependencies, where an app deployed with --omit=dev loses it', () => {
    const files = ['README.md', 'mock/README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];
    const lines = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line) => line.match(/npm (?:install|i) [^`#\n]*/g) ?? [])
        .map((command) => `${file}: ${command.trim()}`),
    );
    expect(lines.filter((line) => line.includes('gitea-mock')).length).toBeGreaterThan(3);
    expect(lines.filter((line) => /(?:--save-dev|-D)\b/.test(line) && line.includes('gitea-contract'))).toEqual([]);
  });
});

describe("the README's examples/", () => {
  it('links every file of examples/ by name, and nothing that is not there', () => {
    const linked = [...README.matchAll(/\]\(examples\/([^)]+)\)/g)].map(([, name]) => name);
    expect(new Set(linked)).toEqual(new Set(readdirSync(join(ROOT, 'examples'))));
  });
});

describe("the README's app beside the rest of Gitea's API", () => {
  const BASE = 'https://gitea.example.org/api/v1';
  const TOKEN = 'readme-beside-token';
  type MswModule = typeof import('../mock/src/msw/handlers.js');
  type App = { renameOrgLabel(org: string, from: string, to: string): Promise<{ id?: number; name?: string }> };
  let gitea: ReturnType<MswModule['createGiteaHandlers']>;
  let server: ReturnType<typeof setupServer>;
  let folder: string;
  let app: App;
  const listed: string[] = [];

  beforeAll(async () => {
    const { createGiteaHandlers } = (await import(join(ROOT, 'mock/dist/msw.mjs'))) as MswModule;
    gitea = createGiteaHandlers({ baseUrl: BASE, sandbox: true });
    // The read the kit lacks, as Gitea answers it, from the caller's sandbox world.
    const labels = http.get(`${BASE}/orgs/:org/labels`, async ({ params, request }) => {
      const credential = request.headers.get('authorization');
      listed.push(`${params.org} ${credential}`);
      const world = credential ? await gitea.world(credential) : undefined;
      const org = world?.orgs.find((candidate) => candidate.name === params.org);
      if (!org) return HttpResponse.json({ message: 'not found', url: `${BASE}/swagger` }, { status: 404 });
      return HttpResponse.json(world!.orgLabels.filter((entry) => entry.org === org.id).map((entry) => entry.label));
    });
    // First: the mock's handlers answer every other path under the base URL with Gitea's 404.
    server = setupServer(labels, ...gitea.handlers);
    server.listen({ onUnhandledRequest: 'error' });
    // The block as written, in a folder of its own whose packages are this workspace's.
    const [block] = typeScriptBlocks('README.md', README).filter(({ code }) => code.includes('renameOrgLabel'));
    expect(block).toBeDefined();
    folder = await mkdtemp(join(tmpdir(), 'readme-beside-'));
    await symlink(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
    await writeFile(join(folder, 'app.ts'), block!.code);
    process.env.GITEA_TOKEN = TOKEN;
    app = (await import(pathToFileURL(join(folder, 'app.ts')).href)) as App;
  });

  afterAll(async () => {
    server?.close();
    await gitea?.close();
    delete process.env.GITEA_TOKEN;
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('finds the label with its own read and renames it through the kit: the sandbox keeps the new name', async () => {
    const renamed = await app.renameOrgLabel('acme', 'priority/high', 'priority/urgent');
    expect(renamed).toMatchObject({ id: 5001, name: 'priority/urgent' });
    const world = await gitea.world({ token: TOKEN });
    expect(world?.orgLabels.map(({ label }) => label.name)).toEqual(['priority/urgent']);
    expect(listed).toEqual([`acme token ${TOKEN}`]);
    // Renamed, the old name is no longer found: the app's own error, from its own read.
    await expect(app.renameOrgLabel('acme', 'priority/high', 'x')).rejects.toThrow(
      'acme has no label named priority/high',
    );
  });
});
