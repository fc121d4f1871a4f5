// The built sandbox bin as users run it, and hook receivers, for the tests of one describe block:
// each started in a test is stopped after it, whatever its outcome. The delivery log is read
// through the sandbox's own endpoint.
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { createGiteaClient, unwrap, type EditPullRequestOption, type GiteaClient } from '../../src/index.js';
import type { DeliveryRecord } from '../../test/support/mock-internals.js';
import { call } from './call.js';
import { startHookReceiver, type HookReceiver } from './hook-receiver.js';
import { launch, type Launched } from './launch.js';

const CLI = fileURLToPath(new URL('../../mock/dist/cli.mjs', import.meta.url));

/** Pull request 43 of acme/rocket edited with `body`. */
export const editPullOn = (gitea: GiteaClient, body: EditPullRequestOption) =>
  unwrap(
    gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
      params: { path: { owner: 'acme', repo: 'rocket', index: 43 } },
      body,
    }),
  );

/** Call in a describe block: what it starts is stopped after each test (`started` takes more). */
export function builtSandboxes() {
  const started: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((each) => each.close()));
  });

  /** The built bin with these options (and Node's `node` options), in `env`. */
  async function bin(args: string[], node: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<Launched> {
    const launched = await launch(process.execPath, [...node, CLI, 'sandbox', '--port', '0', ...args], env);
    started.push({ close: () => launched.stop() });
    return launched;
  }

  async function receiver(answering?: 'hang'): Promise<HookReceiver> {
    const each = await startHookReceiver(answering);
    started.push(each);
    return each;
  }

  /** The delivery log of `token`'s world on `launched`. */
  async function logOf(launched: Launched, token: string): Promise<DeliveryRecord[]> {
    const answer = await call(`${new URL(launched.baseUrl).origin}/__sandbox/deliveries`, 'GET', { token });
    expect(answer.status).toBe(200);
    return (answer.json as { deliveries: DeliveryRecord[] }).deliveries;
  }

  /** The log once no entry is pending. */
  async function settledLog(launched: Launched, token: string): Promise<DeliveryRecord[]> {
    for (let tries = 0; ; tries++) {
      const log = await logOf(launched, token);
      if (log.every((entry) => entry.state !== 'pending')) return log;
      expect(tries, JSON.stringify(log.map((entry) => entry.state))).toBeLessThan(400);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const clientOf = (launched: Launched, token: string) =>
    createGiteaClient({ baseUrl: launched.baseUrl, auth: { token }, retry: 0 });

  return { started, bin, receiver, logOf, settledLog, clientOf };
}
