// The server profiles: openapi.yaml as a given Gitea or Forgejo release answers, each the base
// document changed by the OpenAPI Overlay in profiles/<name>.yaml. `node scripts/profiles.mjs`
// bundles each with Redocly CLI (`bundle --overlay`) into dist/profiles/<name>.json, the files the
// package ships; `--generate` writes what the profiles make: generated/api.d.ts (openapi-typescript's
// types of the base with every field a profile's records add), generated/profiles.ts (the profiles'
// names and the operations each lacks) and docs/profiles.md (the operations against the profiles);
// `--check` fails when one of them is stale. An action whose target matches nothing
// fails every one of them: Redocly would skip it without a word.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { applyOverlay } from './overlay.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASE = join(ROOT, 'openapi.yaml');
const FOLDER = join(ROOT, 'profiles');
const TABLE = join(ROOT, 'docs', 'profiles.md');
const MODULE = join(ROOT, 'generated', 'profiles.ts');
const TYPES = join(ROOT, 'generated', 'api.d.ts');
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const run = promisify(execFile);

// Redocly's CLI reports usage and checks for updates unless told not to; the build needs neither.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

/** Gitea before Forgejo, each by version: the table's column order. */
function order(a, b) {
  const [fa, va] = a.split('-');
  const [fb, vb] = b.split('-');
  if (fa !== fb) return fa === 'gitea' ? -1 : 1;
  const na = va.split('.').map(Number);
  const nb = vb.split('.').map(Number);
  for (let i = 0; i < Math.max(na.length, nb.length); i++)
    if ((na[i] ?? 0) !== (nb[i] ?? 0)) return (na[i] ?? 0) - (nb[i] ?? 0);
  return 0;
}

const readYaml = async (file) => parse(await readFile(file, 'utf8'), { maxAliasCount: -1 });

/** The base document, parsed. */
export const loadBase = () => readYaml(BASE);

/** Every profile: its name, its overlay's file and the overlay, in the table's order. */
export async function loadProfiles() {
  const names = (await readdir(FOLDER))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort(order);
  return Promise.all(
    names.map(async (name) => {
      const file = join(FOLDER, `${name}.yaml`);
      return { name, file, overlay: await readYaml(file) };
    }),
  );
}

let appliedOnce;
/**
 * The base and every profile with its overlay applied (`document`, `matches`), made once per
 * process: the generators of `--generate` and `--check` read the same, instead of parsing and
 * applying everything three times.
 */
function applied() {
  appliedOnce ??= Promise.all([loadBase(), loadProfiles()]).then(([base, profiles]) => ({
    base,
    profiles: profiles.map((profile) => ({ ...profile, ...applyOverlay(base, profile.overlay) })),
  }));
  return appliedOnce;
}

/** Each profile's document, the base with its overlay applied: what gitea-mock's build ships as dist/profiles/<name>.json. */
export async function profileDocuments() {
  const { profiles } = await applied();
  return profiles.map(({ name, document }) => ({ name, document }));
}

/** The actions of an overlay that select nothing in the document as the earlier actions leave it. */
export function unmatchedActions(base, overlay) {
  const { matches } = applyOverlay(base, overlay);
  return matches.flatMap((paths, i) => (paths.length === 0 ? [{ index: i, target: overlay.actions[i].target }] : []));
}

async function redocly(args) {
  try {
    return await run(process.execPath, [REDOCLY, ...args], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    throw new Error(`redocly ${args[0]} failed:\n${output}`);
  }
}

/**
 * Bundles every profile into `<outDir>/<name>.json` with Redocly CLI, in one process: a config of
 * its own names each profile as an API with its overlay, so the build costs one start. Refuses
 * before bundling when an action matches nothing. Returns the files written.
 */
export async function buildProfiles(outDir) {
  const [base, profiles] = await Promise.all([loadBase(), loadProfiles()]);
  const stale = profiles.flatMap(({ name, overlay }) =>
    unmatchedActions(base, overlay).map(({ index, target }) => `profiles/${name}.yaml action ${index}: ${target}`),
  );
  if (stale.length > 0) throw new Error(`these overlay actions match nothing:\n  ${stale.join('\n  ')}`);
  await mkdir(outDir, { recursive: true });
  // Written next to the targets, then renamed into place: a reader never sees half a file.
  const work = await mkdtemp(join(outDir, '.work-'));
  try {
    const apis = Object.fromEntries(
      profiles.map(({ name, file }) => [name, { root: BASE, overlays: [file], output: join(work, `${name}.json`) }]),
    );
    // YAML is a superset of JSON: Redocly reads this file as its configuration.
    await writeFile(join(work, 'redocly.yaml'), JSON.stringify({ apis }));
    await redocly(['bundle', '--config', join(work, 'redocly.yaml')]);
    const written = [];
    for (const { name } of profiles) {
      // Without Redocly's indentation: the package carries six documents, and a third of each
      // would be spaces.
      const file = join(work, `${name}.json`);
      await writeFile(file, JSON.stringify(JSON.parse(await readFile(file, 'utf8'))));
      const target = join(outDir, `${name}.json`);
      await rename(file, target);
      written.push(target);
    }
    return written;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The schemas an answer or a delivery of the document reaches, not those of requests alone. */
function answeredSchemas(doc) {
  const roots = [];
  for (const item of Object.values(doc.paths ?? {}))
    for (const method of METHODS) if (item?.[method]) roots.push(item[method].responses);
  roots.push(doc.webhooks);
  const reached = new Set();
  for (const root of roots)
    for (const key of reachedComponents(doc, root)) if (key.startsWith('schemas/')) reached.add(key.slice(8));
  return reached;
}

/**
 * The base document with every field a profile's answers or deliveries add to one of its records,
 * as an optional property whose description names the servers that send it: what the client's
 * types are made from, so that a record carries every field any server sends. Request bodies
 * stay the base's: a field only Forgejo reads is not one a Gitea user may send.
 */
export async function widenedDocument() {
  const { base, profiles } = await applied();
  const widened = structuredClone(base);
  const answered = answeredSchemas(base);
  const added = new Map();
  for (const { name, document } of profiles) {
    for (const schema of answered) {
      const own = base.components.schemas[schema].properties ?? {};
      for (const [field, value] of Object.entries(document.components.schemas[schema]?.properties ?? {})) {
        if (Object.hasOwn(own, field)) continue;
        const key = `${schema}.${field}`;
        const seen = added.get(key);
        if (seen && !isDeepStrictEqual(seen.value, value))
          throw new Error(`${key} differs between ${seen.servers.join(', ')} and ${name}: make them one`);
        if (seen) seen.servers.push(name);
        else added.set(key, { schema, field, value, servers: [name] });
      }
    }
  }
  for (const { schema, field, value, servers } of added.values()) {
    const description = `Only ${servers.join(', ')} have it.${value.description ? ` ${value.description}` : ''}`;
    widened.components.schemas[schema].properties[field] = { ...value, description };
  }
  return widened;
}

/** The text of generated/api.d.ts: openapi-typescript's types of the widened document. */
export async function profileTypes() {
  return COMMENT_HEADER + astToString(await openapiTS(await widenedDocument()));
}

/**
 * The text of generated/profiles.ts: the profiles' names for `detectServer`, and for the client's
 * types the operations each server lacks (path, then methods), so that a call to one of them does
 * not compile for that profile.
 */
export async function profileModule() {
  const { base, profiles } = await applied();
  const lines = [
    '// Generated by scripts/profiles.mjs from profiles/*.yaml (npm run generate); do not edit.',
    '',
    '/** The servers the contract has a profile for: Gitea, then Forgejo, each oldest first. */',
    `export const SERVER_PROFILES = [\n${profiles.map((p) => `  '${p.name}',\n`).join('')}] as const;`,
    '',
    'export type ServerProfile = (typeof SERVER_PROFILES)[number];',
    '',
    "/** The operations of openapi.yaml each profile's server has no route for: path, then methods. */",
    'export interface AbsentOperations {',
  ];
  for (const { name, document } of profiles) {
    const absent = new Map();
    for (const [path, item] of Object.entries(base.paths))
      for (const method of METHODS)
        if (item[method] && !document.paths?.[path]?.[method])
          absent.set(path, [...(absent.get(path) ?? []), `'${method}'`]);
    const members = [...absent].map(([path, methods]) => `    '${path}': ${methods.join(' | ')};`);
    lines.push(members.length ? `  '${name}': {\n${members.join('\n')}\n  };` : `  '${name}': {};`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

// ---------------------------------------------------------------- the table

/** `E1` … `E20` by operationId, from the table of docs/contract.md. */
async function operationLabels() {
  const text = await readFile(join(ROOT, 'docs', 'contract.md'), 'utf8');
  const labels = new Map();
  for (const [, label, id] of text.matchAll(/^\| (E\d+) \| [A-Z]+ \| `[^`]+` \| `(\w+)` \|/gm)) labels.set(id, label);
  return labels;
}

/** Each operation and webhook of a document: its key (`paths /x get`), label and operation. */
function operationsOf(doc, labels) {
  const list = [];
  for (const section of ['paths', 'webhooks'])
    for (const [path, item] of Object.entries(doc[section] ?? {}))
      for (const method of METHODS) {
        const operation = item?.[method];
        if (!operation) continue;
        const id = operation.operationId;
        const label =
          section === 'webhooks'
            ? `webhook \`${path}\``
            : `${labels.get(id) ?? '?'} \`${method.toUpperCase()} ${path}\` (\`${id}\`)`;
        list.push({ key: `${section} ${path} ${method}`, section, path, method, label, operation, item });
      }
  return list;
}

/** The components (`components/<kind>/<name>`) an operation reaches through its $refs. */
function reachedComponents(doc, value) {
  const reached = new Set();
  const walk = (node) => {
    if (Array.isArray(node)) for (const v of node) walk(v);
    else if (node && typeof node === 'object') {
      if (typeof node.$ref === 'string' && node.$ref.startsWith('#/components/')) {
        const [kind, name] = node.$ref.slice('#/components/'.length).split('/');
        const key = `${kind}/${name}`;
        if (!reached.has(key)) {
          reached.add(key);
          walk(doc.components?.[kind]?.[name]);
        }
      }
      for (const v of Object.values(node)) walk(v);
    }
  };
  walk(value);
  return reached;
}

/**
 * The operations an action touches: where it points into an operation, that one; into a path
 * item or webhook, each of its operations; into a component, each operation reaching it in the
 * base document. Pointing above a component (adding one) touches none by itself.
 */
function touched(path, update, ops, reach) {
  const [section, a, b] = path;
  if (section === 'paths' || section === 'webhooks') {
    if (a === undefined) return ops.filter((o) => o.section === section && Object.hasOwn(update ?? {}, o.path));
    return ops.filter(
      (o) => o.section === section && o.path === a && (b === undefined || !METHODS.includes(b) || o.method === b),
    );
  }
  if (section === 'components' && b !== undefined) return ops.filter((o) => reach.get(o.key).has(`${a}/${b}`));
  return [];
}

/** The text of docs/profiles.md. */
export async function profileTable() {
  const [{ base, profiles }, labels] = await Promise.all([applied(), operationLabels()]);
  const number = (o) =>
    o.section === 'webhooks' ? 1000 : Number(labels.get(o.operation.operationId)?.slice(1) ?? 999);
  const ops = operationsOf(base, labels).sort((a, b) => number(a) - number(b));
  const reach = new Map(ops.map((o) => [o.key, reachedComponents(base, o.operation)]));
  const cells = new Map(ops.map((o) => [o.key, new Map()]));
  const general = new Map();
  for (const { name, overlay, document, matches } of profiles) {
    const present = new Set(operationsOf(document, labels).map((o) => o.key));
    for (const o of ops) cells.get(o.key).set(name, present.has(o.key) ? [] : null);
    general.set(name, []);
    for (const [i, action] of overlay.actions.entries()) {
      const summary = action['x-summary'];
      if (typeof summary !== 'string') throw new Error(`profiles/${name}.yaml action ${i} has no x-summary`);
      const hit = new Set(matches[i].flatMap((path) => touched(path, action.update, ops, reach)).map((o) => o.key));
      // An action that only adds components shows where the actions referencing them point.
      const addsComponents = matches[i].every((path) => path.length === 2 && path[0] === 'components');
      if (hit.size === 0 && !addsComponents && !general.get(name).includes(summary)) general.get(name).push(summary);
      for (const key of hit) {
        const list = cells.get(key).get(name);
        if (list && !list.includes(summary)) list.push(summary);
      }
    }
  }
  const escapeCell = (text) => text.replaceAll('|', '\\|');
  const lines = [
    '<!-- Generated by scripts/profiles.mjs from profiles/*.yaml (npm run generate); do not edit. -->',
    '',
    '# Server profiles',
    '',
    'Each profile is `openapi.yaml` as one Gitea or Forgejo release answers: the base document',
    'changed by the OpenAPI Overlay in `profiles/<name>.yaml`, bundled into gitea-mock as',
    "`gitea-mock/profiles/<name>.json`, which the mock's `--server <name>` serves. `gitea-1.27` is the base itself. Each",
    "action's description names the server's source it comes from; below, what each profile changes",
    'for each operation ("as the base" where nothing). The audit and what could not be read are in',
    '[contract.md](contract.md#server-profiles).',
    '',
    `| operation | ${profiles.map((p) => `\`${p.name}\``).join(' | ')} |`,
    `|---|${profiles.map(() => '---').join('|')}|`,
  ];
  for (const o of ops) {
    const row = profiles.map(({ name }) => {
      const list = cells.get(o.key).get(name);
      if (list === null) return '**absent**';
      return list.length === 0 ? 'as the base' : list.map(escapeCell).join('; ');
    });
    lines.push(`| ${o.label} | ${row.join(' | ')} |`);
  }
  lines.push('', 'Changes to the whole document:', '');
  for (const { name } of profiles)
    lines.push(`- \`${name}\`: ${general.get(name).map(escapeCell).join('; ') || 'none'}.`);
  return `${lines.join('\n')}\n`;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const generated = [
    [TYPES, profileTypes],
    [TABLE, profileTable],
    [MODULE, profileModule],
  ];
  if (process.argv.includes('--check')) {
    for (const [file, make] of generated) {
      const current = await readFile(file, 'utf8').catch(() => '');
      if (current !== (await make())) {
        console.error(`${relative(ROOT, file)} is not up to date: run npm run generate`);
        process.exit(1);
      }
    }
  } else if (process.argv.includes('--generate')) {
    for (const [file, make] of generated) await writeFile(file, await make());
  } else {
    const written = await buildProfiles(join(ROOT, 'dist', 'profiles'));
    console.log(`profiles: ${written.map((f) => relative(ROOT, f)).join(', ')}`);
  }
}
