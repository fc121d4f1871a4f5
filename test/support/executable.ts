// Whether a path the tests would run is a file this process may execute.
import { accessSync, constants, statSync } from 'node:fs';

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
