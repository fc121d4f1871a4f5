// notifyReadThread: a notification thread marked read, unread or pinned. Gitea answers 205 with the thread as
// JSON, but fetch drops the body of a 205: read as text, it is there only where the runtime keeps it.
import type { components } from '../generated/api.js';
import type { AnyClient } from './client.js';
import { unwrap } from './unwrap.js';

type Thread = components['schemas']['NotificationThread'];

export async function markNotificationThread(
  client: AnyClient,
  { id, toStatus }: { id: string | number; toStatus?: 'read' | 'unread' | 'pinned' },
): Promise<Thread | undefined> {
  // openapi-fetch leaves an undefined query value out.
  const text = await unwrap(
    client.PATCH('/notifications/threads/{id}', {
      params: { path: { id: id as string }, query: { 'to-status': toStatus as 'read' } },
      parseAs: 'text',
    }),
  );
  try {
    return text ? (JSON.parse(text) as Thread) : undefined;
  } catch {
    return undefined;
  }
}
