// `npm run bench`: every benchmark, each printing its figures and a ratio against a baseline
// measured in the same run. Never part of `npm test`.
import { benchClientSize } from './client-size.mjs';
import { benchClientSpeed } from './client-speed.mjs';
import { benchLoad } from './mock-load.mjs';
import { benchMswHandlers } from './msw-handlers.mjs';
import { benchProxy } from './proxy-overhead.mjs';
import { benchSandboxPostgres } from './sandbox-postgres.mjs';
import { benchStartup } from './mock-startup.mjs';
import { benchThroughput } from './mock-throughput.mjs';
import { benchTimeBounds } from './time-bounds.mjs';
import { benchWebhookForm } from './webhook-form.mjs';
import { benchWebhooks } from './webhook-throughput.mjs';

console.log(`# gitea-contract benchmarks (node ${process.version}, ${new Date().toISOString()})`);
await benchClientSize();
await benchClientSpeed();
await benchStartup();
const throughputOk = await benchThroughput();
const proxyOk = await benchProxy();
const mswOk = await benchMswHandlers();
const webhooksOk = (await benchWebhooks()) && (await benchWebhookForm());
const loadOk = (await benchLoad()) && (await benchLoad('gitea-mock sandbox'));
const postgresOk = await benchSandboxPostgres();
const boundsOk = await benchTimeBounds();
process.exitCode = throughputOk && proxyOk && loadOk && mswOk && webhooksOk && postgresOk && boundsOk ? 0 : 1;
