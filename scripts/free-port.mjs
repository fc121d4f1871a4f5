// A port free on 127.0.0.1 now, for a server that cannot be asked to pick one (PostgreSQL, a
// child process that must be told its port). The suites, the benchmarks and scripts/postgres.mjs
// share it.
import { createServer } from 'node:net';

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
