// docs/seed-world.md lists the records every sandbox world starts with: its tables are made here
// from the seed itself (the world of a credential that never wrote, through the MSW handlers), so
// the page cannot drift from the seed code in mock/src/sandbox/world.ts nor from the examples.
// `PRINT_SEED_TABLES=1` prints the tables as they should be, for a page to update.
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createGiteaHandlers } from '../mock/src/msw/handlers.js';
import type { World } from '../test/support/mock-internals.js';

const gitea = createGiteaHandlers({ baseUrl: 'https://gitea.example.org/api/v1', sandbox: true });
afterAll(() => gitea.close());

/** A value as the page writes it: in code, lists joined, nothing as a dash, and `{ plain }` as text. */
const cell = (value: unknown): string => {
  if (Array.isArray(value)) return value.map(cell).join(', ');
  if (value === '' || value === null) return '—';
  if (typeof value === 'object' && value !== null && 'plain' in value) return String(value.plain);
  return `\`${String(value)}\``;
};

function table(heading: string, columns: string[], rows: unknown[][]): string {
  return [
    `## ${heading}`,
    '',
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The page's tables, in its order, from `world`. */
function tables(world: World): string[] {
  const repo = (id: number) => world.repos.find((each) => each.id === id)?.full_name;
  const login = (id: number) => world.users.find((each) => each.id === id)?.login;
  return [
    table(
      'Users',
      ['id', 'login', 'full name', 'site admin'],
      world.users.map((user) => [user.id, user.login, user.full_name, user.is_admin]),
    ),
    table(
      'Organizations',
      ['id', 'name', 'full name'],
      world.orgs.map((org) => [org.id, org.name ?? org.username, org.full_name]),
    ),
    table(
      'Repositories',
      ['id', 'full name', 'default branch', 'private'],
      world.repos.map((each) => [each.id, each.full_name, each.default_branch, each.private]),
    ),
    table(
      'Branches',
      ['repository', 'branch'],
      world.branches.map((branch) => [repo(branch.repo), branch.name]),
    ),
    table(
      'Issues',
      ['id', 'repository', 'number', 'title', 'state', 'assignees', 'labels', 'milestone'],
      world.issues.map(({ repo: id, issue }) => [
        issue.id,
        repo(id),
        issue.number,
        issue.title,
        issue.state,
        (issue.assignees ?? []).map((user) => user.login),
        (issue.labels ?? []).map((label) => label.id),
        issue.milestone?.id ?? null,
      ]),
    ),
    table(
      'Pull requests',
      ['id', 'repository', 'number', 'title', 'state', 'head → base', 'assignees', 'labels', 'milestone'],
      world.pulls.map(({ repo: id, pull }) => [
        pull.id,
        repo(id),
        pull.number,
        pull.title,
        pull.state,
        `${pull.head?.ref} → ${pull.base?.ref}`,
        (pull.assignees ?? []).map((user) => user.login),
        (pull.labels ?? []).map((label) => label.id),
        pull.milestone?.id ?? null,
      ]),
    ),
    table(
      'Milestones',
      ['id', 'repository', 'title', 'state'],
      world.milestones.map(({ repo: id, milestone }) => [milestone.id, repo(id), milestone.title, milestone.state]),
    ),
    table(
      'Labels',
      ['id', 'of', 'name', 'color', 'exclusive'],
      [
        ...world.repoLabels.map(({ repo: id, label }) => [
          label.id,
          repo(id),
          label.name,
          label.color,
          label.exclusive,
        ]),
        ...world.orgLabels.map(({ org, label }) => [
          label.id,
          world.orgs.find((each) => each.id === org)?.name,
          label.name,
          label.color,
          label.exclusive,
        ]),
      ],
    ),
    table(
      'Hooks',
      ['id', 'repository', 'type', 'url', 'content type', 'events', 'active'],
      world.hooks.map(({ repo: id, hook }) => [
        hook.id,
        repo(id),
        hook.type,
        hook.config?.url,
        hook.config?.content_type,
        hook.events,
        hook.active,
      ]),
    ),
    table(
      'Deploy keys',
      ['id', 'repository', 'title', 'read only'],
      world.deployKeys.map(({ repo: id, key }) => [key.id, repo(id), key.title, key.read_only]),
    ),
    table(
      'Teams',
      ['id', 'organization', 'name', 'permission', 'members'],
      world.teams.map(({ team, members }) => [
        team.id,
        team.organization?.name,
        team.name,
        team.permission,
        members.map(login),
      ]),
    ),
    table(
      'Packages',
      ['id', 'owner', 'type', 'name', 'version'],
      world.packages.map((each) => [each.id, each.owner?.login, each.type, each.name, each.version]),
    ),
    table(
      'Other records',
      ['what', 'id', 'of'],
      [
        ...world.threads.map((thread) => [{ plain: 'notification thread' }, thread.id, thread.repository?.full_name]),
        ...world.workflows.map(({ repo: id, workflow }) => [{ plain: 'Actions workflow' }, workflow.id, repo(id)]),
        ...world.releases.map(({ repo: id, id: release }) => [{ plain: 'release' }, release, repo(id)]),
        ...world.comments.map(({ repo: id, id: comment }) => [{ plain: 'issue comment' }, comment, repo(id)]),
      ],
    ),
  ];
}

describe('docs/seed-world.md', () => {
  it('lists the seed world as the sandbox makes it, table by table', async () => {
    const page = await readFile(new URL('../docs/seed-world.md', import.meta.url), 'utf8');
    const world = (await gitea.world('token seed-world-page'))!;
    if (process.env.PRINT_SEED_TABLES) console.log(tables(world).join('\n\n'));
    for (const expected of tables(world)) expect(page).toContain(expected);
  });
});
