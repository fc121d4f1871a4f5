// Generated answers made coherent in place, as Gitea derives fields from the path and from a record's own names.
import { pathParams } from '../front/operations.js';

/** The host the document's examples and `x-faker` generators use. */
const ORIGIN = 'https://gitea.example.org';
const API = `${ORIGIN}/api/v1`;
/** Gitea's two "never set" times: Go's zero time, and a zero Unix time (the epoch, on a server in UTC). */
const [ZERO_TIME, EPOCH] = ['0001-01-01T00:00:00Z', '1970-01-01T00:00:00Z'];
type Rec = Record<string, unknown>;
type PathValues = Record<string, string>;

const isRecord = (value: unknown): value is Rec => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets the fields the record already has (one the schema left out stays out), but to undefined. */
function derive(record: Rec, fields: Rec): void {
  for (const [key, value] of Object.entries(fields)) if (key in record && value !== undefined) record[key] = value;
}

export function makeCoherent(value: unknown): void {
  if (typeof value === 'object' && value !== null) Object.values(value).forEach(makeCoherent);
  if (!isRecord(value)) return;
  const { login, name, owner } = value;
  const ownerLogin = isRecord(owner) ? owner.login : owner;
  if (typeof login === 'string') {
    // A user: `username` is `login` again (Gitea's User.MarshalJSON), the profile is at /{login}.
    derive(value, { username: login, html_url: `${ORIGIN}/${encodeURIComponent(login)}` });
  } else if (typeof name === 'string' && 'repo_admin_change_team_access' in value) {
    // An organization: `username` is its name again (deprecated, still sent).
    derive(value, { username: name });
  } else if (typeof name === 'string' && 'full_name' in value && typeof ownerLogin === 'string') {
    // A repository, its owner a user record or, in an issue's `repository`, a login: each address is on `{owner}/{name}`.
    const fullName = `${ownerLogin}/${name}`;
    derive(value, {
      full_name: fullName,
      html_url: `${ORIGIN}/${fullName}`,
      clone_url: `${ORIGIN}/${fullName}.git`,
      ssh_url: `git@gitea.example.org:${fullName}.git`,
      url: `${ORIGIN}/api/v1/repos/${fullName}`,
    });
  }
  // The times and fields Gitea leaves unset for what did not happen (not archived, not a mirror, open, not merged).
  if (value.archived === false) derive(value, { archived_at: EPOCH });
  if (value.mirror === false) derive(value, { mirror_updated: ZERO_TIME, mirror_interval: '' });
  if (value.state === 'open') derive(value, { closed_at: null });
  if (value.merged === false) derive(value, { merged_at: null, merge_commit_sha: null, merged_by: null });
}

/** Makes `record` (a repository, or an issue's short `repository`) the repository a path names. */
function nameRepository(record: unknown, owner: string, name: string): void {
  if (!isRecord(record)) return;
  if (isRecord(record.owner)) derive(record.owner, { login: owner });
  else derive(record, { owner });
  derive(record, { name });
}

/** A numeric id from the path, or undefined for one that is no safe integer (the generated id stays). */
const idOf = (value: string): number | undefined => (/^\d{1,15}$/.test(value) ? Number(value) : undefined);

const stem = (p: PathValues): string => `/${encodeURIComponent(p.owner!)}/${encodeURIComponent(p.repo!)}`;

/** What each operation's answer takes from its path, by template: the record's id or number, its repository, their addresses. */
const FROM_PATH: Record<string, (answer: Rec, p: PathValues, at: string) => void> = {
  '/repos/{owner}/{repo}/issues/{index}/assignees': (issue, p, at) => {
    derive(issue, {
      number: idOf(p.index!),
      url: `${API}/repos${at}/issues/${p.index}`,
      html_url: `${ORIGIN}${at}/issues/${p.index}`,
    });
    nameRepository(issue.repository, p.owner!, p.repo!);
  },
  '/repos/{owner}/{repo}/pulls/{index}': (pull, p, at) => {
    const page = `${ORIGIN}${at}/pulls/${p.index}`;
    // Gitea's `url` of a pull request is its web address too.
    derive(pull, {
      number: idOf(p.index!),
      url: page,
      html_url: page,
      diff_url: `${page}.diff`,
      patch_url: `${page}.patch`,
    });
    const { base, head } = pull;
    if (isRecord(base)) {
      nameRepository(base.repo, p.owner!, p.repo!);
      if (isRecord(base.repo)) derive(base, { repo_id: base.repo.id });
    }
    // A head whose fork was deleted: no repository, id -1, the pull ref, and no diff counts.
    if (isRecord(head) && head.repo === null) {
      derive(head, { repo_id: -1, ref: `refs/pull/${p.index}/head` });
      for (const count of ['additions', 'deletions', 'changed_files']) delete pull[count];
    }
  },
  '/repos/{owner}/{repo}/keys/{id}': (key, p, at) => {
    derive(key, { id: idOf(p.id!), url: `${API}/repos${at}/keys/${p.id}` });
    nameRepository(key.repository, p.owner!, p.repo!);
  },
  '/repos/{owner}/{repo}/hooks/{id}': (hook, p) => derive(hook, { id: idOf(p.id!) }),
  // The path takes a milestone's id, or its name when no milestone has that id.
  '/repos/{owner}/{repo}/milestones/{id}': (milestone, p) =>
    derive(milestone, idOf(p.id!) === undefined ? { title: p.id } : { id: idOf(p.id!) }),
  '/repos/{owner}/{repo}/actions/workflows/{workflow_id}': (workflow, p, at) => {
    const id = p.workflow_id!;
    // The file in the code view of the default branch, and the badge of that branch.
    derive(workflow, {
      id,
      path: `.gitea/workflows/${id}`,
      url: `${API}/repos${at}/actions/workflows/${encodeURIComponent(id)}`,
      html_url: `${ORIGIN}${at}/src/branch/main/.gitea/workflows/${encodeURIComponent(id)}`,
      badge_url: `${ORIGIN}${at}/actions/workflows/${encodeURIComponent(id)}/badge.svg?branch=main`,
    });
  },
  // Gitea sends a key's lists; each subkey it builds without them (null), unverified, naming its key.
  '/user/gpg_keys': (key) => {
    if (key.emails === null) key.emails = [];
    if (key.subkeys === null) key.subkeys = [];
    for (const subkey of Array.isArray(key.subkeys) ? key.subkeys : []) {
      if (isRecord(subkey))
        derive(subkey, { emails: null, subkeys: null, verified: false, primary_key_id: key.key_id });
    }
  },
  '/orgs/{org}/labels/{id}': (label, p) =>
    derive(label, { id: idOf(p.id!), url: `${API}/orgs/${encodeURIComponent(p.org!)}/labels/${p.id}` }),
  '/notifications/threads/{id}': (thread, p) =>
    derive(thread, { id: idOf(p.id!), url: `${API}/notifications/threads/${encodeURIComponent(p.id!)}` }),
  '/packages/{owner}/{type}/{name}': (version, p) => {
    derive(version, { type: p.type, name: p.name });
    if (isRecord(version.owner)) derive(version.owner, { login: p.owner });
    if (typeof version.version === 'string') {
      derive(version, {
        html_url: `${ORIGIN}/${[p.owner!, '-', 'packages', p.type!, p.name!, version.version].map(encodeURIComponent).join('/')}`,
      });
    }
  },
};

/** Makes a generated answer to `path` (below /api/v1) agree with it, each record of a list or the one answered. */
export function agreeWithPath(template: string, path: string, answer: unknown): void {
  const rule = FROM_PATH[template];
  if (!rule) return;
  const p = pathParams(template, path);
  // `at` is `/{owner}/{repo}`, for the rules of a repository's paths.
  for (const record of Array.isArray(answer) ? answer : [answer]) if (isRecord(record)) rule(record, p, stem(p));
}
