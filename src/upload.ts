// repoCreateReleaseAttachment: a release attachment sent as multipart/form-data with the file in the `attachment` part.
import type { components } from '../generated/api.js';
import type { AnyClient } from './client.js';
import { unwrap } from './unwrap.js';

export interface ReleaseAttachmentUpload {
  owner: string;
  repo: string;
  /** Id of the release. */
  id: number;
  /** Name of the attachment; defaults to the file's own name, else "attachment". */
  name?: string;
  file: Blob | ArrayBufferView | ArrayBuffer;
}

// Errors need no scrubbing here: the client's methods redact what they raise, and nothing else
// in here sees a secret.
export async function uploadReleaseAttachment(
  client: AnyClient,
  { owner, repo, id, file, name }: ReleaseAttachmentUpload,
): Promise<components['schemas']['Attachment']> {
  // Anything else would go as text: `undefined` (no file picked) as the word "undefined". By tag,
  // not instanceof, so that a Blob or ArrayBuffer from another realm (an iframe, a vm) still goes.
  if (!ArrayBuffer.isView(file) && !/^\[object (Blob|File|ArrayBuffer)\]$/.test(Object.prototype.toString.call(file)))
    throw new TypeError('file is not a Blob, File, typed array or ArrayBuffer');
  name ??= (file as { name?: string }).name || 'attachment';
  const form = new FormData();
  form.append('attachment', file instanceof Blob ? file : new Blob([file as BlobPart]), name);
  return unwrap(
    client.POST('/repos/{owner}/{repo}/releases/{id}/assets', {
      params: { path: { owner, repo, id }, query: { name } },
      // openapi-fetch leaves Content-Type to fetch for FormData, which adds the boundary.
      body: form as never,
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
}
