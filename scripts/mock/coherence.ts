// Dynamic answers are generated field by field, so a user's `username` would name someone else
// than its `login`, and a repository's `full_name` and addresses another repository than its
// `name` and `owner`. Gitea derives those fields from the names; this does the same to a
// generated answer, in place, wherever such a record sits in it (an issue's assignees, a pull
// request's base repository, a package's owner).

/** The host the document's examples and `x-faker` generators use. */
const ORIGIN = 'https://gitea.example.org';

type Rec = Record<string, unknown>;

const isRecord = (value: unknown): value is Rec => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets the fields the record already has; a field the schema left out stays out. */
function derive(record: Rec, fields: Rec): void {
  for (const [key, value] of Object.entries(fields)) if (key in record) record[key] = value;
}

export function makeCoherent(value: unknown): void {
  if (Array.isArray(value)) {
    value.forEach(makeCoherent);
    return;
  }
  if (!isRecord(value)) return;
  Object.values(value).forEach(makeCoherent);
  const { login, name, owner } = value;
  if (typeof login === 'string') {
    // A user: `username` is `login` again (Gitea's User.MarshalJSON), the profile is at /{login}.
    derive(value, { username: login, html_url: `${ORIGIN}/${encodeURIComponent(login)}` });
  } else if (typeof name === 'string' && 'repo_admin_change_team_access' in value) {
    // An organization: `username` is its name again (deprecated, still sent).
    derive(value, { username: name });
  } else if (typeof name === 'string' && 'full_name' in value && isRecord(owner) && typeof owner.login === 'string') {
    // A repository: every address is built on `{owner}/{name}`.
    const fullName = `${owner.login}/${name}`;
    derive(value, {
      full_name: fullName,
      html_url: `${ORIGIN}/${fullName}`,
      clone_url: `${ORIGIN}/${fullName}.git`,
      ssh_url: `git@${new URL(ORIGIN).host}:${fullName}.git`,
      url: `${ORIGIN}/api/v1/repos/${fullName}`,
    });
  }
}
