// Uploads a file as an asset of a release.
//
//   node examples/upload-release-asset.mjs [file] [owner/repo] [release id]
//
// Without a file it uploads a small generated text file. GITEA_BASE_URL defaults to the mock
// (`npm start`, which answers with its sample attachment whatever is sent); GITEA_TOKEN is your
// access token (the mock takes any).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ApiError, createGiteaClient, uploadReleaseAttachment } from '../dist/index.js';

const baseUrl = process.env.GITEA_BASE_URL ?? 'http://127.0.0.1:4010/api/v1';
const token = process.env.GITEA_TOKEN ?? 'any-token-the-mock-accepts';
const [path, repoPath = 'acme/rocket', releaseId = '14001'] = process.argv.slice(2);
const [owner = 'acme', repo = 'rocket'] = repoPath.split('/');

// Any Blob, File, Uint8Array or ArrayBuffer will do.
const file = path
  ? new Blob([await readFile(path)])
  : new Blob([`built ${new Date().toISOString()}\n`], { type: 'text/plain' });
const name = path ? basename(path) : 'build-info.txt';

const gitea = createGiteaClient({ baseUrl, auth: { token } });
try {
  console.log(`uploading ${name} (${file.size} bytes) to release ${releaseId} of ${owner}/${repo}`);
  const asset = await uploadReleaseAttachment(gitea, { owner, repo, id: Number(releaseId), file, name });
  console.log(`attachment ${asset.id}: ${asset.name}, ${asset.size} bytes, ${asset.browser_download_url}`);
} catch (error) {
  console.error(error instanceof ApiError ? error.message : String(error));
  process.exitCode = 1;
}
