#!/usr/bin/env node
// The `gitea-mock` command: `gitea-mock [options]` serves the mock (serve.ts), `gitea-mock verify
// [options]` runs live mode against a real server (live/verify.ts). Each is loaded only when asked for.
if (process.argv[2] === 'verify') {
  // Live mode reads its options from process.argv, as when it ran alone.
  process.argv.splice(2, 1);
  await import('./live/verify.js');
} else {
  await import('./serve.js');
}
