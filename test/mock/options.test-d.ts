// The options of the mock's two entries for a script, as a TypeScript project sees them: a seed
// is a string or a number, as `--seed 7` suggests.
import { startMockServer } from '../../mock/src/server.js';
import { createGiteaHandlers } from '../../mock/src/msw/handlers.js';

export function seeds(): void {
  createGiteaHandlers({ baseUrl: '/api/v1', dynamic: true, seed: 1 });
  createGiteaHandlers({ baseUrl: '/api/v1', faults: 0.1, seed: 'checkout-7' });
  void startMockServer({ port: 0, dynamic: true, seed: 7 });
  void startMockServer({ port: 0, seed: '7' });
  // @ts-expect-error: a seed is a string or a number
  createGiteaHandlers({ baseUrl: '/api/v1', seed: true });
  // @ts-expect-error: a seed is a string or a number
  void startMockServer({ seed: [7] });
}
