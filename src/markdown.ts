// E11: rendered HTML as a string, whether the server labels it text/html or text/plain.
import type { components } from '../generated/api.js';
import { scrubFor, type GiteaClient } from './client.js';
import { unwrap } from './unwrap.js';

export function renderMarkdown(client: GiteaClient, options: components['schemas']['MarkdownOption']): Promise<string> {
  return unwrap(client.POST('/markdown', { body: options, parseAs: 'text' })).then(
    (html) => html ?? '',
    (error: unknown) => Promise.reject(scrubFor(client, error)),
  );
}
