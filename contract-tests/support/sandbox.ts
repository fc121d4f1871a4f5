// One in-process sandbox per test file: started before, closed after, and the file fails if the
// sandbox warned of any answer that broke the document.
import { afterAll, beforeAll, expect } from 'vitest';
import { startMockServer, type MockServer } from '../../mock/src/server.js';
import type { SandboxOptions } from '../../test/support/mock-internals.js';

export function useSandbox(options: SandboxOptions): { current: MockServer } {
  const holder = {} as { current: MockServer };
  const warnings: string[] = [];
  beforeAll(async () => {
    holder.current = await startMockServer({ port: 0, sandbox: options, onWarning: (line) => warnings.push(line) });
  });
  afterAll(async () => {
    await holder.current?.close();
    expect(warnings).toEqual([]);
  });
  return holder;
}
