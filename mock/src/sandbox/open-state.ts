// `--state`: a PostgreSQL URL (world-postgres.ts, worlds shared by every process on the database)
// or a folder (world-store.ts, one process's). The driver for PostgreSQL is loaded only for a URL.
import { isPostgresUrl } from './postgres-url.js';
import { openState, type OpenOptions, type StateStore } from './world-store.js';

export async function openStateStore(state: string, options: OpenOptions): Promise<StateStore> {
  if (!isPostgresUrl(state)) return openState(state, options);
  return (await import('./world-postgres.js')).openPostgresState(state, options);
}
