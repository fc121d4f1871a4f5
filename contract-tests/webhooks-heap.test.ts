// The sandbox's deliveries under heap pressure, against the built bin in a 512 MiB heap: payloads
// of a megabyte and more until the deliveries waiting, and the worlds' logs, pass their share of
// the heap. Long loads by design, in `npm run test:dist`.
import { describe, expect, it } from 'vitest';
import { unwrap } from '../src/index.js';
import { builtSandboxes, editPullOn } from './support/sandbox-bin.js';

const rocket = { owner: 'acme', repo: 'rocket' } as const;

describe('the deliveries within their share of the heap, against the built bin', () => {
  const { bin, receiver, logOf, settledLog, clientOf } = builtSandboxes();

  it('deliveries past their share of the heap are dropped, settled with why, the API unaffected', async () => {
    const mock = await bin(['--webhook-timeout', '600'], ['--max-old-space-size=512']);
    const hanging = await receiver('hang');
    const gitea = clientOf(mock, 'heavy');
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${hanging.origin}/hook`, content_type: 'form' }, events: ['pull_request'] },
      }),
    );
    // A title of 1 MiB, each of whose bytes the form writes as three.
    const title = '!'.repeat(1024 * 1024);
    await editPullOn(gitea, { title });
    for (let i = 0; i < 12; i++) await editPullOn(gitea, { state: i % 2 === 0 ? 'closed' : 'open' });
    // Each settles on a line of its own: the dropped ones at once, the rest when the sandbox stops.
    const dropped =
      /webhook pull_request \w+ to http:\/\/127\.0\.0\.1:\d+\/hook: failed \(not sent: the deliveries waiting or under way hold \d+ MiB, and this one's \d+ MiB would pass their share of the heap \(\d+ MiB;/g;
    for (let tries = 0; (mock.output().match(dropped) ?? []).length < 9; tries++) {
      expect(tries, mock.output()).toBeLessThan(400);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await logOf(mock, 'heavy')).at(-1)!.state).toBe('failed');
    // The API answers as before.
    expect((await editPullOn(gitea, { state: 'closed' })).title).toBe(title);
  }, 60_000);

  it("the worlds' logs together keep to their share of the heap: the least recently written give way", async () => {
    const system = await receiver();
    const mock = await bin(['--webhook', `${system.origin}/all`], ['--max-old-space-size=512']);
    // Each write's delivery carries a title of 1 MiB: about 2 MiB of heap in the log.
    const worlds = Array.from({ length: 24 }, (_, index) => `log-share-${index}`);
    for (const [index, token] of worlds.entries())
      await editPullOn(clientOf(mock, token), { title: String.fromCharCode(97 + (index % 26)).repeat(1024 * 1024) });
    const newest = await settledLog(mock, worlds.at(-1)!);
    expect(newest.map((entry) => [entry.type, entry.action, entry.state])).toEqual([
      ['pull_request', 'edited', 'delivered'],
    ]);
    expect(await logOf(mock, worlds[0]!)).toEqual([]);
    const kept = [];
    for (const token of worlds) kept.push((await logOf(mock, token)).length);
    // Oldest first, then every world since.
    expect(kept.indexOf(1)).toBeGreaterThan(0);
    expect(kept.slice(kept.indexOf(1)).every((count) => count === 1)).toBe(true);
  }, 60_000);
});
