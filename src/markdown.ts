// renderMarkdown: rendered HTML as a string, whether the server labels it text/html or text/plain.
import type { components } from '../generated/api.js';
import type { AnyClient } from './client.js';
import { unwrap } from './unwrap.js';

export async function renderMarkdown(
  client: AnyClient,
  options: components['schemas']['MarkdownOption'],
): Promise<string> {
  return (await unwrap(client.POST('/markdown', { body: options, parseAs: 'text' }))) ?? '';
}
