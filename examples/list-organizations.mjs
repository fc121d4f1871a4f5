// Lists every organization on the server, following the pages (site administrators only).
//
//   node examples/list-organizations.mjs [page size]
//
// GITEA_BASE_URL defaults to the mock (`npm start`); GITEA_TOKEN is your access token (the mock
// takes any). With the mock's five organizations, a page size of 2 takes three pages.
import { ApiError, createGiteaClient, paginate } from '../dist/index.js';

const baseUrl = process.env.GITEA_BASE_URL ?? 'http://127.0.0.1:4010/api/v1';
const token = process.env.GITEA_TOKEN ?? 'any-token-the-mock-accepts';
const limit = Number(process.argv[2] ?? 50);

const gitea = createGiteaClient({ baseUrl, auth: { token } });
try {
  let count = 0;
  // paginate() asks for the next page only when the loop wants more items.
  for await (const org of paginate(gitea, '/admin/orgs', { params: { query: { limit } } })) {
    count += 1;
    console.log(`${org.name.padEnd(16)} ${(org.visibility ?? '').padEnd(8)} ${org.full_name}`);
  }
  console.log(`${count} organizations`);
} catch (error) {
  // Every non-2xx answer is an ApiError; its message names the call and the server's reason.
  console.error(error instanceof ApiError ? error.message : String(error));
  process.exitCode = 1;
}
