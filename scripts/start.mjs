// `npm start`: rebuilds dist/ only when a source changed, then runs the mock launcher in this
// same process (one Node start-up fewer than a prestart script).
import { buildIfStale } from './build-if-stale.mjs';

if (buildIfStale() === 0) await import('../mock/dist/cli.mjs');
else process.exitCode = 1;
