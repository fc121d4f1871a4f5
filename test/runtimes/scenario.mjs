// One scenario of the built client, written once and run unchanged in Node, Deno, Bun and
// Chromium. Plain JavaScript without imports and without `node:` or runtime globals beyond the web
// platform's (fetch, Blob, TextDecoder), so each runtime loads it as it is: the caller hands in the
// package's module, loaded the way that runtime loads it. Web Crypto (crypto.subtle) too, for the
// webhook signatures. Each step checks what it got and
// reports ok, or failed with the reason; nothing here throws.

/** A user name and password well outside Latin-1: `btoa` alone would throw on them. */
const BASIC_USER = 'jürgen';
const BASIC_PASSWORD = 'pässwörd✓';
const TIMEOUT_MS = 300;
const KEY_PATH = '/repos/{owner}/{repo}/keys/{id}';

/** The runtime this scenario runs in and its version. */
export function currentRuntime() {
  const { Deno, Bun, process, navigator } = globalThis;
  if (Deno) return { name: 'deno', version: Deno.version.deno };
  if (Bun) return { name: 'bun', version: Bun.version };
  if (process?.versions?.node) return { name: 'node', version: process.versions.node };
  const chrome = /(?:Headless)?Chrome\/([\d.]+)/.exec(navigator?.userAgent ?? '');
  return chrome ? { name: 'chromium', version: chrome[1] } : { name: 'unknown', version: navigator?.userAgent ?? '' };
}

class StepFailure extends Error {}

function check(condition, reason) {
  if (!condition) throw new StepFailure(reason);
}

/** JSON with sorted keys, so two records compare by content, not by key order. */
function canonical(value) {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function checkSame(actual, expected, what) {
  check(
    canonical(actual) === canonical(expected),
    `${what}: expected ${canonical(expected)}, got ${canonical(actual)}`,
  );
}

/**
 * The steps, in order. Each gets the package (`lib`), the scenario's configuration, a client of
 * the mock (`gitea`) and the URLs that client's fetch was asked for (`requested`).
 */
const STEPS = {
  async paging({ lib, gitea, requested, config: { baseUrl, expected } }) {
    const organizations = await lib.collectAll(gitea, '/admin/orgs', { params: { query: { limit: 2 } } });
    checkSame(
      organizations.map((org) => org.name),
      expected.organizations,
      'organizations',
    );
    const pages = requested.map((url) => new URL(url).searchParams.get('page'));
    const wanted = Array.from({ length: Math.ceil(expected.organizations.length / 2) }, (_, i) => String(i + 1));
    checkSame(pages, wanted, 'pages asked for');
    // The paging headers of one page, readable where they come from another origin too.
    const first = await gitea.GET('/admin/orgs', { params: { query: { limit: 2 } } });
    const total = first.response.headers.get('X-Total-Count');
    check(total === String(expected.organizations.length), `X-Total-Count: ${total}`);
    const link = first.response.headers.get('Link');
    check(
      link ===
        `<${baseUrl}/admin/orgs?limit=2&page=2>; rel="next",<${baseUrl}/admin/orgs?limit=2&page=${wanted.length}>; rel="last"`,
      `Link: ${link}`,
    );
  },

  async 'label edit'({ lib, gitea, config: { expected } }) {
    const label = await lib.unwrap(
      gitea.PATCH('/orgs/{org}/labels/{id}', {
        params: { path: { org: 'acme', id: 5001 } },
        body: {
          color: '#D93F0B',
          description: 'Needs attention before the next launch.',
          exclusive: true,
          is_archived: false,
        },
      }),
    );
    checkSame(label, expected.label, 'label');
  },

  async 'Blob upload'({ lib, gitea, config: { expected } }) {
    const file = new Blob([new Uint8Array([0x1f, 0x8b, 0x08, 0x00])], { type: 'application/gzip' });
    const attachment = await lib.uploadReleaseAttachment(gitea, {
      owner: 'acme',
      repo: 'rocket',
      id: 14001,
      file,
      name: 'rocket-1.2.0-linux-amd64.tar.gz',
    });
    checkSame(attachment, expected.attachment, 'attachment');
  },

  async markdown({ lib, gitea, config: { expected } }) {
    const html = await lib.renderMarkdown(gitea, {
      Text: 'Fixed in #42, thanks **bob**!',
      Mode: 'comment',
      Context: '/acme/rocket',
    });
    check(html === expected.markdown, `HTML: ${JSON.stringify(html)}`);
  },

  async ApiError({ lib, gitea, config: { expected } }) {
    const call = gitea.GET(KEY_PATH, {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
      headers: { Prefer: 'code=404' },
    });
    const error = await lib.unwrap(call).then(
      () => undefined,
      (caught) => caught,
    );
    check(
      error instanceof lib.ApiError,
      `rejected with ${error === undefined ? 'nothing: the call succeeded' : String(error)}`,
    );
    check(error.status === 404, `status ${error.status}`);
    check(error.operationId === 'repoGetKey', `operationId ${error.operationId}`);
    check(
      error.message === `GET ${KEY_PATH} (repoGetKey): 404 ${expected.notFoundMessage}`,
      `message ${JSON.stringify(error.message)}`,
    );
    check(error.body?.message === expected.notFoundMessage, `body ${canonical(error.body)}`);
  },

  async timeout({ lib, config: { stallUrl } }) {
    const stalled = lib.createGiteaClient({
      baseUrl: stallUrl,
      auth: { token: 'runtime-scenario' },
      timeoutMs: TIMEOUT_MS,
    });
    const started = Date.now();
    const error = await stalled.GET('/admin/orgs').then(
      () => undefined,
      (caught) => caught,
    );
    const elapsed = Date.now() - started;
    check(
      error instanceof lib.TimeoutError && error.name === 'TimeoutError',
      `rejected with ${error === undefined ? 'nothing: the call was answered' : String(error)}`,
    );
    check(
      error.message === `GET /admin/orgs timed out after ${TIMEOUT_MS} ms`,
      `message ${JSON.stringify(error.message)}`,
    );
    // Timers may fire a millisecond early by Date.now(); the upper bound only says it did not hang.
    check(elapsed >= TIMEOUT_MS - 5 && elapsed < TIMEOUT_MS + 5000, `took ${elapsed} ms`);
  },

  async webhook({ lib, config: { webhook } }) {
    const { secret, payload, signature } = webhook;
    const verify = (body, value, key = secret) => lib.verifyWebhookSignature(key, body, value);
    check(await verify(payload, signature), 'a signature made by node:crypto was refused');
    check(await verify(payload, `sha256=${signature}`), 'an X-Hub-Signature-256 value was refused');
    check(await verify(new TextEncoder().encode(payload), signature), 'the payload as bytes was refused');
    check(!(await verify(payload.replace('closed', 'reopened'), signature)), 'a tampered body passed');
    check(!(await verify(payload, signature, `${secret}x`)), 'a wrong secret passed');
    for (const malformed of ['', 'sha256=', signature.slice(1), `sha1=${signature}`, 'z'.repeat(64)])
      check(!(await verify(payload, malformed)), `the signature ${JSON.stringify(malformed)} passed`);
    const delivery = (body, headers) =>
      new Request('https://bot.example.net/hook', {
        method: 'POST',
        headers: { 'X-Gitea-Event': 'pull_request', 'X-Gitea-Event-Type': 'pull_request', ...headers },
        body,
      });
    const parsed = await lib.parseWebhook(
      delivery(payload, { 'Content-Type': 'application/json', 'X-Hub-Signature-256': `sha256=${signature}` }),
      { secret },
    );
    check(parsed.known && parsed.type === 'pull_request', `parsed as ${canonical(parsed.type)}`);
    check(parsed.payload.pull_request.state === 'closed', 'the payload was not read');
    const form = await lib.parseWebhook(
      delivery(`payload=${encodeURIComponent(payload)}`, {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Gitea-Signature': signature,
      }),
      { secret },
    );
    check(form.payload.number === parsed.payload.number, 'the form variant was not read');
    const refused = await lib.parseWebhook(delivery(payload, { 'X-Gitea-Signature': '' }), { secret }).then(
      () => undefined,
      (caught) => caught,
    );
    check(
      refused instanceof lib.WebhookError && refused.status === 401 && refused.code === 'missing-signature',
      `an unsigned delivery: ${String(refused)}`,
    );
  },

  async 'UTF-8 Basic'({ lib, config: { echoUrl } }) {
    const basic = lib.createGiteaClient({ baseUrl: echoUrl, auth: { username: BASIC_USER, password: BASIC_PASSWORD } });
    const { data, error } = await basic.GET('/admin/orgs');
    check(!error, `the echo server refused: ${canonical(error)}`);
    // The echo server answers, instead of organizations, the credentials it decoded as UTF-8.
    checkSame(data, { username: BASIC_USER, password: BASIC_PASSWORD }, 'the server decoded');
  },
};

/** The names of the steps, in the order they run: the columns of the suite's table. */
export const STEP_NAMES = Object.keys(STEPS);

/**
 * Runs every step against `config.baseUrl` (the mock), `config.stallUrl` (a server that accepts
 * and never answers) and `config.echoUrl` (a server that answers the Basic credentials it decoded).
 */
export async function runScenario(lib, config) {
  // The real fetch, with the URLs it was asked for written down, to count the pages.
  const requested = [];
  const fetch = (input, init) => {
    requested.push(typeof input === 'string' ? input : input.url);
    return globalThis.fetch(input, init);
  };
  const gitea = lib.createGiteaClient({ baseUrl: config.baseUrl, auth: { token: 'runtime-scenario' }, fetch });
  const steps = [];
  for (const [step, run] of Object.entries(STEPS)) {
    try {
      await run({ lib, gitea, requested, config });
      steps.push({ step, ok: true });
    } catch (error) {
      const reason =
        error instanceof StepFailure
          ? error.message
          : `threw ${error?.name ?? typeof error}: ${error?.message ?? String(error)}`;
      steps.push({ step, ok: false, reason });
    }
  }
  return { runtime: currentRuntime(), steps };
}
