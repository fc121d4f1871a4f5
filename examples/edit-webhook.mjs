// Edits a repository webhook, and handles each way the call can fail.
//
//   node examples/edit-webhook.mjs [owner/repo] [hook id]
//
// GITEA_BASE_URL defaults to the mock (`npm start`); GITEA_TOKEN is your access token (the mock
// takes any). GITEA_PREFER=code=404 (or 401, 403, 422) asks the mock for that documented error
// answer, to see the handling below at work; GITEA_TIMEOUT_MS sets the timeout (default 10 000).
import { ApiError, TimeoutError, createGiteaClient } from '../dist/index.js';

const baseUrl = process.env.GITEA_BASE_URL ?? 'http://127.0.0.1:4010/api/v1';
const token = process.env.GITEA_TOKEN ?? 'any-token-the-mock-accepts';
const [owner = 'acme', repo = 'rocket'] = (process.argv[2] ?? 'acme/rocket').split('/');
const id = Number(process.argv[3] ?? 4001);

// throwOnError: every non-2xx answer throws an ApiError instead of returning { error }.
const gitea = createGiteaClient({
  baseUrl,
  auth: { token },
  timeoutMs: Number(process.env.GITEA_TIMEOUT_MS ?? 10_000),
  throwOnError: true,
});

try {
  const { data: hook } = await gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
    params: { path: { owner, repo, id } },
    // Gitea clears branch_filter and resets events when they are left out, so send both.
    body: { active: true, events: ['push', 'release'], branch_filter: 'main' },
    headers: process.env.GITEA_PREFER ? { Prefer: process.env.GITEA_PREFER } : {},
  });
  console.log(
    `hook ${hook.id} (${hook.type}) is ${hook.active ? 'active' : 'inactive'} and fires on ${hook.events.join(', ')} for ${hook.branch_filter}`,
  );
} catch (error) {
  process.exitCode = 1;
  if (error instanceof ApiError) {
    // The server's own reason is in error.body.message; error.message adds the call.
    const reason = error.body?.message ?? error.message;
    if (error.status === 401) console.error(`not signed in (401): ${reason}. Check GITEA_TOKEN.`);
    else if (error.status === 403)
      console.error(
        `not allowed (403): ${reason}. Hooks need a repository administrator and a token with write:repository.`,
      );
    else if (error.status === 404)
      console.error(`not found (404): no hook ${id} in ${owner}/${repo}, or the repository is hidden from you.`);
    else if (error.status === 422) console.error(`refused (422): ${reason}`);
    else console.error(`unexpected answer: ${error.message}`);
  } else if (error instanceof TimeoutError) {
    console.error(`no answer in time: ${error.message}`);
  } else if (error instanceof TypeError && error.message === 'fetch failed') {
    // fetch's own failure: nothing answered (refused, unknown host, broken TLS); the cause says which.
    console.error(`cannot reach ${baseUrl}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
  } else {
    throw error;
  }
}
