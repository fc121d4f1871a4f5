// `--state`: a PostgreSQL URL (world-postgres.ts, worlds shared by every process on the database)
// or a folder (world-store.ts, one process's). The driver for PostgreSQL is loaded only for a URL.
import { DOCUMENT } from '../contract/document-file.js';
import { isPostgresUrl } from './postgres-url.js';
import type { Backing } from './store.js';
import { openState, type OpenOptions } from './world-store.js';

export async function openStateStore(
  state: string,
  { document = DOCUMENT, ...limits }: Omit<OpenOptions, 'document'> & { document?: string },
): Promise<Backing> {
  const options = { ...limits, document };
  if (!isPostgresUrl(state)) return openState(state, options);
  return (await import('./world-postgres.js')).openPostgresState(state, options);
}
