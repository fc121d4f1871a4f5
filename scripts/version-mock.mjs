// npm version's `version` script: `npm version minor` (or patch, major, an exact version) raises
// the client package's version, and this makes the mock package follow, in its package.json and
// in the lockfile: its own version and its dependency on gitea-contract, which must name the
// workspace's version or `npm ci` fetches the old one from the registry. It stages both files, so
// the commit npm version makes holds the three. One version for the workspace.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file) => JSON.parse(readFileSync(`${ROOT}/${file}`, 'utf8'));
const write = (file, data) => writeFileSync(`${ROOT}/${file}`, `${JSON.stringify(data, null, 2)}\n`);

const { version } = read('package.json');
const mock = read('mock/package.json');
mock.version = version;
mock.dependencies['gitea-contract'] = version;
write('mock/package.json', mock);

const lock = read('package-lock.json');
const locked = lock.packages.mock;
locked.version = version;
locked.dependencies['gitea-contract'] = version;
write('package-lock.json', lock);

// As npm version stages package.json and package-lock.json: not with --no-git-tag-version, nor outside git.
if (process.env.npm_config_git_tag_version !== 'false') {
  try {
    execFileSync('git', ['add', 'mock/package.json', 'package-lock.json'], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    // Not a git checkout: npm version commits nothing either.
  }
}
console.log(`gitea-mock follows: ${version}, depending on gitea-contract ${version}`);
