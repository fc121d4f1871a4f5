// E11: rendered HTML as a string, whether the server labels it text/html or text/plain.
import type { components } from '../generated/api.js';
import type { GiteaClient } from './client.js';
import { guard } from './guard.js';
import { unwrap } from './unwrap.js';

export function renderMarkdown(client: GiteaClient, options: components['schemas']['MarkdownOption']): Promise<string> {
  return guard(client, async () => (await unwrap(client.POST('/markdown', { body: options, parseAs: 'text' }))) ?? '');
}
