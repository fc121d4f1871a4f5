// E8 answers 205 Reset Content with the thread as its body, which fetch drops: the thread comes
// back when the body could be read, else undefined; a 205 never throws.
import type { components } from '../generated/api.js';
import { scrubFor, type GiteaClient } from './client.js';
import { unwrap } from './unwrap.js';

type Thread = components['schemas']['NotificationThread'];

export async function markNotificationThread(client: GiteaClient, options: { id: string | number; toStatus?: 'read' | 'unread' | 'pinned' }): Promise<Thread | undefined> {
  const text = await unwrap(
    client.PATCH('/notifications/threads/{id}', {
      params: { path: { id: String(options.id) }, query: options.toStatus ? { 'to-status': options.toStatus } : {} },
      parseAs: 'text',
    }),
  ).catch((error: unknown) => Promise.reject(scrubFor(client, error)));
  try {
    return text ? (JSON.parse(text as string) as Thread) : undefined;
  } catch {
    return undefined;
  }
}
