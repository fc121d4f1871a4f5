// Where the package's openapi.yaml is, from source (scripts/…) or from a build (dist/…).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function findDocument(): string {
  for (let up = '../'; up.length <= 12; up += '../') {
    const candidate = fileURLToPath(new URL(`${up}openapi.yaml`, import.meta.url));
    if (existsSync(candidate)) return candidate;
  }
  return fileURLToPath(new URL('../openapi.yaml', import.meta.url));
}

export const DOCUMENT = findDocument();
