import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig, type UserConfig } from 'tsdown';
import { tsgoPath } from '../scripts/tsgo-path.mjs';
import { parse } from 'yaml';
import { documentTwin, operationsTwin } from './src/contract/document-file.js';
import { profileDocuments } from '../scripts/profiles.mjs';

/**
 * The package's document as data for the browser build: `gitea-contract/openapi.yaml` parsed at
 * build time (its YAML anchors expanded) and bundled as JSON, which `JSON.parse` reads faster than
 * an object literal of the same size.
 */
function documentAsData(): NonNullable<UserConfig['plugins']> {
  return {
    name: 'gitea-mock:document-as-data',
    load(id: string) {
      if (!id.endsWith('/openapi.yaml')) return null;
      const document = parse(readFileSync(id, 'utf8'), { maxAliasCount: -1 }) as unknown;
      return { code: `export default JSON.parse(${JSON.stringify(JSON.stringify(document))});`, moduleType: 'js' };
    },
  };
}

/**
 * The shipped document parsed, with its operation table, for a start that reads JSON instead of
 * computing both (`documentTwin`, src/contract/document-file.ts).
 */
function documentTwinAsset(): NonNullable<UserConfig['plugins']> {
  return {
    name: 'gitea-mock:document-twin',
    async generateBundle() {
      const text = readFileSync(createRequire(import.meta.url).resolve('gitea-contract/openapi.yaml'), 'utf8');
      this.emitFile({ type: 'asset', fileName: 'document.json', source: await documentTwin(text) });
    },
  };
}

/**
 * Each server profile's document (profiles/<name>.yaml applied to the base) as dist/profiles/<name>.json,
 * which `--server <name>` serves; the same documents as Redocly's `bundle --overlay` (test/profiles.test.ts).
 * Beside each, its operations (`<name>.operations.json`), which a start would take seconds to make.
 */
function profileDocumentAssets(): NonNullable<UserConfig['plugins']> {
  return {
    name: 'gitea-mock:profile-documents',
    async generateBundle() {
      for (const { name, document } of await profileDocuments()) {
        const text = JSON.stringify(document);
        this.emitFile({ type: 'asset', fileName: `profiles/${name}.json`, source: text });
        this.emitFile({
          type: 'asset',
          fileName: `profiles/${name}.operations.json`,
          source: await operationsTwin(text),
        });
      }
    },
  };
}

/**
 * uri-template-lite (Prism's validator matches path templates with it) hangs its `URI` on the
 * module's top-level `this`, which CommonJS makes `exports`; rolldown bundles a CommonJS module's
 * top-level `this` as `undefined`, so the browser build names `exports` instead.
 */
function commonJsThis(): NonNullable<UserConfig['plugins']> {
  return {
    name: 'gitea-mock:commonjs-this',
    transform(code: string, id: string) {
      if (!id.replace(/\\/g, '/').endsWith('/uri-template-lite/index.js')) return null;
      const fixed = code.replace('this.URI || (this.URI = {})', 'exports.URI || (exports.URI = {})');
      if (fixed === code)
        throw new Error(`uri-template-lite changed: ${id} no longer hangs URI on this; check the browser build`);
      return { code: fixed };
    },
  };
}

/**
 * The licences of the packages a bundle carries, beside it: the browser build holds Prism
 * (Apache-2.0), Ajv, markdown-it, lodash and others (MIT, ISC, BSD), whose licences ask that
 * their texts go with copies of their code. Written as `<bundle>.licenses.txt`, one section per
 * package (name, version, licence, then its LICENSE file or, without one, the licence's name);
 * a package without a licence fails the build. On the Node build, which bundles none, it guards:
 * a package bundled there by mistake would add a file the build's list of outputs does not know.
 */
function bundledLicences(): NonNullable<UserConfig['plugins']> {
  const packageOf = (id: string): string | undefined => {
    const path = id.replace(/\\/g, '/');
    const at = path.lastIndexOf('/node_modules/');
    if (at < 0) return undefined;
    const rest = path.slice(at + '/node_modules/'.length).split('/');
    return path.slice(0, at + '/node_modules/'.length) + rest.slice(0, rest[0]!.startsWith('@') ? 2 : 1).join('/');
  };
  return {
    name: 'gitea-mock:bundled-licences',
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) {
        // Code only (`.mjs`): the declaration files' build (`.d.mts`) passes through here too.
        if (chunk.type !== 'chunk' || !chunk.fileName.endsWith('.mjs')) continue;
        const roots = new Set(chunk.moduleIds.map(packageOf).filter((root): root is string => root !== undefined));
        if (roots.size === 0) continue;
        const sections = [...roots]
          .map((root) => {
            type Named = string | { type?: string };
            const manifest = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as {
              name: string;
              version: string;
              license?: Named;
              licenses?: Named[];
            };
            const { name, version } = manifest;
            // `license`, or the older `licenses` list; either as a name or as `{ type }`.
            const named = [manifest.license, ...(manifest.licenses ?? [])]
              .map((each) => (typeof each === 'object' ? each?.type : each))
              .filter(Boolean);
            const license = named.join(' OR ');
            if (!license) throw new Error(`${name}@${version} is bundled into ${chunk.fileName} but names no licence`);
            const entries = readdirSync(root);
            const file = entries.find((entry) => /^(licen[cs]e|copying)(\.|$)/i.test(entry));
            const text = file
              ? readFileSync(`${root}/${file}`, 'utf8').trim()
              : `(the package ships no licence file; its package.json names ${license})`;
            // Apache-2.0 asks for the NOTICE file, where a package has one, to go with it too.
            const notice = entries.find((entry) => /^notice(\.|$)/i.test(entry));
            return {
              name,
              heading: `${name}@${version} (${license})`,
              text: notice ? `${text}\n\n${readFileSync(`${root}/${notice}`, 'utf8').trim()}` : text,
            };
          })
          .sort((a, b) => a.name.localeCompare(b.name));
        const header = `The packages bundled into ${chunk.fileName}, with their licences.\n`;
        const body = sections
          .map(({ heading, text }) => `${'='.repeat(72)}\n${heading}\n${'='.repeat(72)}\n\n${text}\n`)
          .join('\n');
        this.emitFile({
          type: 'asset',
          fileName: chunk.fileName.replace(/\.mjs$/, '.licenses.txt'),
          source: `${header}\n${body}`,
        });
      }
    },
  };
}

export default defineConfig([
  // The `gitea-mock` command (serving, and live mode as `gitea-mock verify`) and its server for
  // programmatic use, the MSW handlers for Node (`gitea-mock/msw`, with msw itself left to the user
  // as a peer), ESM for Node 20, with type declarations for the two libraries; the sandbox's markdown
  // renderer is an entry of its own, as worker threads load it by file name. The dependencies
  // (gitea-contract and its `gitea-contract/internal`, Prism, Ajv, yaml, markdown-it, tinypool…)
  // stay imports.
  {
    entry: {
      cli: 'src/cli/main.ts',
      server: 'src/server.ts',
      msw: 'src/msw/handlers.ts',
      'markdown-worker': 'src/sandbox/markdown-worker.ts',
      // The suites and the benchmark start their PostgreSQL servers with it, as `gitea-mock postgres` does.
      'postgres-server': 'src/cli/postgres-server.ts',
    },
    outDir: 'dist',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: '../tsconfig.build.json',
    dts: { tsgo: { path: tsgoPath } },
    clean: false,
    // rolldown's note that some plugins take most of the build: known, and no action to take.
    checks: { pluginTimings: false },
    // Serving, live mode, the proxy (with Ajv for its answer check) and the sandbox's store are
    // chunks loaded only when used, under names that do not change from build to build.
    outputOptions: { chunkFileNames: '[name].mjs' },
    plugins: [documentTwinAsset(), profileDocumentAssets(), bundledLicences()],
  },
  // `gitea-mock/msw` for browsers (the `browser` export condition): one self-contained ES module
  // with every dependency and the document inside, msw left out (the app's own, a peer). Its
  // types are the Node entry's (dist/msw.d.mts): the two export the same.
  {
    entry: { 'msw.browser': 'src/msw/browser.ts' },
    outDir: 'dist',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    dts: false,
    clean: false,
    // rolldown's note that some plugins take most of the build: known, and no action to take.
    checks: { pluginTimings: false },
    deps: { neverBundle: [/^msw(\/|$)/], alwaysBundle: (id) => !/^msw(\/|$)/.test(id), onlyBundle: false },
    // mime-types, which Prism's validator reaches, takes `extname` from Node's `path`.
    alias: { path: fileURLToPath(new URL('src/msw/path-extname.ts', import.meta.url)) },
    plugins: [documentAsData(), commonJsThis(), bundledLicences()],
    // Where the bundle's licences are, for anyone who finds the file alone.
    outputOptions: {
      codeSplitting: false,
      banner:
        '/*! gitea-mock/msw for browsers: the licences of the packages bundled here are in msw.browser.licenses.txt beside this file. */',
    },
    outExtensions: () => ({ js: '.mjs' }),
  },
]);
