// What a field of a Gitea answer looks like, judged by its name wherever it sits, so that nested
// records (a repository's owner, a pull request's base repository, a team's organization) are
// checked too. Used on the mock's dynamic answers: lorem ipsum, negative ids and dates of 1913
// fail here.

/** Gitea's user and organization names: alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric, no two of `-_.` in a row. */
const GITEA_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9])?$/;
/** Repository names (Gitea's AlphaDashDot). */
const REPO_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[A-Za-z]{2,}$/;
const HEX_COLOUR = /^[0-9a-fA-F]{6}$/;
const SHA1 = /^[0-9a-f]{40}$/;
const SSH_FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;
const SSH_PUBLIC_KEY =
  /^(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521)) AAAA[A-Za-z0-9+/]+={0,2}(?: \S.*)?$/;
const GPG_KEY_ID = /^[0-9A-F]{16}$/;
/** An ASCII-armored public key block: the armor lines around base64 and its checksum. */
const ARMORED_KEY =
  /^-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n(?:[A-Za-z0-9+/]{1,76}\n)+=[A-Za-z0-9+/]{4}\n-----END PGP PUBLIC KEY BLOCK-----\n$/;
// semver.org's grammar, without build metadata's and pre-release's finer rules.
const SEMVER = /^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const SSH_CLONE = /^git@gitea\.example\.org:([^/\s]+)\/([^/\s]+)\.git$/;

/** Addresses that point away from the Gitea server by nature. */
const OFF_SERVER_URLS = new Set(['original_url', 'external_tracker_url', 'external_wiki_url']);
const DATES = new Set(['created', 'last_login', 'due_on', 'due_date']);
/** Always the zero time on a real server (see its description); not generated. */
const UNSET_DATES = new Set(['deleted_at']);
const COUNTS = new Set([
  'comments',
  'review_comments',
  'additions',
  'deletions',
  'changed_files',
  'open_issues',
  'closed_issues',
]);

/** The kinds of check; `checkRealistic` counts how often each ran, so a run can show none went unused. */
export const CHECKS = [
  'user or organization name',
  'repository name',
  'URL on the server',
  'URL off the server',
  'SSH clone address',
  'e-mail address',
  'label colour',
  'commit SHA',
  'SSH fingerprint',
  'SSH public key',
  'GPG key id',
  'GPG public key',
  'package version',
  'date',
  'id',
  'count',
  'record that agrees with itself',
] as const;
export type Check = (typeof CHECKS)[number];

function isGiteaName(value: unknown): boolean {
  return typeof value === 'string' && GITEA_NAME.test(value) && !/[-_.]{2}/.test(value);
}

function isServerUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.host === 'gitea.example.org' && url.username === '';
  } catch {
    return false;
  }
}

function isHttpsUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

function isSensibleDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return false;
  const year = new Date(time).getUTCFullYear();
  return year >= 2005 && year <= 2030;
}

function isCount(key: string): boolean {
  return key.endsWith('_count') || key.endsWith('_counter') || key === 'size' || COUNTS.has(key);
}

/**
 * Problems of one answer body: each as `path: what`. `hits` counts the checks that ran.
 * The record a field belongs to is told by its siblings: an object with `login` is a user, one
 * with `repo_admin_change_team_access` an organization, another one with `name` and `full_name` a
 * repository.
 */
export function checkRealistic(value: unknown, hits: Map<Check, number>, path = '$'): string[] {
  const problems: string[] = [];
  const check = (kind: Check, ok: boolean, where: string, actual: unknown): void => {
    hits.set(kind, (hits.get(kind) ?? 0) + 1);
    if (!ok) problems.push(`${where}: not a realistic ${kind}: ${JSON.stringify(actual)}`);
  };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) problems.push(...checkRealistic(item, hits, `${path}[${i}]`));
    return problems;
  }
  if (typeof value !== 'object' || value === null) return problems;
  const record = value as Record<string, unknown>;
  const isOrganization = 'repo_admin_change_team_access' in record;
  problems.push(...incoherence(record, path, hits));
  for (const [key, field] of Object.entries(record)) {
    const where = `${path}.${key}`;
    if (typeof field === 'object' && field !== null) {
      // A hook's `config` holds its delivery target's settings, whatever the server is.
      if (key !== 'config') problems.push(...checkRealistic(field, hits, where));
      continue;
    }
    if (field === null) continue;
    if (
      key === 'login' ||
      key === 'username' ||
      (key === 'name' && isOrganization) ||
      (key === 'owner' && typeof field === 'string')
    ) {
      check('user or organization name', isGiteaName(field), where, field);
    } else if (key === 'name' && 'full_name' in record && !isOrganization) {
      check('repository name', typeof field === 'string' && REPO_NAME.test(field), where, field);
      const fullName = String(record.full_name).split('/');
      check(
        'repository name',
        fullName.length === 2 && isGiteaName(fullName[0]) && REPO_NAME.test(fullName[1] ?? ''),
        `${path}.full_name`,
        record.full_name,
      );
    } else if (key === 'ssh_url') {
      const match = SSH_CLONE.exec(String(field));
      check(
        'SSH clone address',
        match !== null && isGiteaName(match[1]) && REPO_NAME.test(match[2] ?? ''),
        where,
        field,
      );
    } else if (OFF_SERVER_URLS.has(key)) {
      check('URL off the server', isHttpsUrl(field), where, field);
    } else if (key === 'url' || key.endsWith('_url')) {
      check('URL on the server', isServerUrl(field), where, field);
    } else if (key === 'email') {
      check('e-mail address', typeof field === 'string' && EMAIL.test(field), where, field);
    } else if (key === 'color') {
      check('label colour', typeof field === 'string' && HEX_COLOUR.test(field), where, field);
    } else if (key === 'sha' || key === 'merge_base' || key === 'merge_commit_sha') {
      check('commit SHA', typeof field === 'string' && SHA1.test(field), where, field);
    } else if (key === 'fingerprint') {
      check('SSH fingerprint', typeof field === 'string' && SSH_FINGERPRINT.test(field), where, field);
    } else if (key === 'key' && typeof field === 'string') {
      check('SSH public key', SSH_PUBLIC_KEY.test(field), where, field);
    } else if ((key === 'key_id' || key === 'primary_key_id') && typeof field === 'string') {
      check('GPG key id', GPG_KEY_ID.test(field) || (key === 'primary_key_id' && field === ''), where, field);
    } else if (key === 'public_key') {
      check('GPG public key', typeof field === 'string' && ARMORED_KEY.test(field), where, field);
    } else if (key === 'version') {
      check('package version', typeof field === 'string' && SEMVER.test(field), where, field);
    } else if ((key.endsWith('_at') || DATES.has(key)) && !UNSET_DATES.has(key)) {
      // What did not happen keeps Gitea's "never set" time: the epoch for an archive, the zero time for a mirror.
      const neverSet =
        (key === 'archived_at' && record.archived === false && field === '1970-01-01T00:00:00Z') ||
        (key === 'mirror_updated' && record.mirror === false && field === '0001-01-01T00:00:00Z');
      check('date', neverSet || isSensibleDate(field), where, field);
    } else if ((key === 'id' || key.endsWith('_id')) && typeof field === 'number') {
      // A pull request's head whose fork was deleted has no repository and the id -1.
      const goneHead = key === 'repo_id' && field === -1 && record.repo === null;
      check('id', Number.isSafeInteger(field) && (key === 'id' ? field > 0 : field >= 0 || goneHead), where, field);
    } else if (isCount(key)) {
      check(
        'count',
        Number.isSafeInteger(field) && (field as number) >= 0 && (field as number) <= (key === 'size' ? 1e8 : 10_000),
        where,
        field,
      );
    }
  }
  return problems;
}

/** Fields Gitea derives from a record's names that say otherwise: a user's `username` and profile, an organization's `username`, a repository's `full_name` and addresses. */
function incoherence(record: Record<string, unknown>, path: string, hits: Map<Check, number>): string[] {
  const expected: Record<string, string> = {};
  const { login, name, owner } = record;
  if (typeof login === 'string')
    Object.assign(expected, { username: login, html_url: `https://gitea.example.org/${login}` });
  else if (typeof name === 'string' && 'repo_admin_change_team_access' in record) expected.username = name;
  else if (
    typeof name === 'string' &&
    'full_name' in record &&
    typeof (typeof owner === 'object' && owner !== null ? (owner as { login?: unknown }).login : owner) === 'string'
  ) {
    // A repository; an issue's `repository` gives its owner as a login.
    const fullName = `${typeof owner === 'string' ? owner : (owner as { login: string }).login}/${name}`;
    Object.assign(expected, {
      full_name: fullName,
      html_url: `https://gitea.example.org/${fullName}`,
      clone_url: `https://gitea.example.org/${fullName}.git`,
      ssh_url: `git@gitea.example.org:${fullName}.git`,
      url: `https://gitea.example.org/api/v1/repos/${fullName}`,
    });
  }
  const problems: string[] = [];
  for (const [key, value] of Object.entries(expected)) {
    if (!(key in record)) continue;
    hits.set('record that agrees with itself', (hits.get('record that agrees with itself') ?? 0) + 1);
    if (record[key] !== value)
      problems.push(
        `${path}.${key}: ${JSON.stringify(record[key])}, where the record's names make it ${JSON.stringify(value)}`,
      );
  }
  return problems;
}
