// Requests answered by `gitea-mock/msw` handlers through MSW's getResponse, with no server, no
// interceptor and no service worker: each request is sent to the examples and to the sandbox, and
// each answer is read back as text. Written once for both builds of the handlers: the Node build
// calls it in the test process, the browser build in a worker without Node's globals, bundled
// with esbuild (contract-tests/msw-browser.test.ts).
import type { getResponse as GetResponse } from 'msw';
import type { createGiteaHandlers as CreateHandlers } from '../../mock/src/msw/handlers.js';

export interface ScenarioRequest {
  /** What the request stands for, to name it in a failure. */
  label: string;
  method: string;
  /** After the base URL's `/api/v1`, with its query. */
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array<ArrayBuffer>;
}

export interface ScenarioInput {
  examplesBase: string;
  sandboxBase: string;
  requests: ScenarioRequest[];
}

export interface ScenarioAnswer {
  label: string;
  source: 'examples' | 'sandbox';
  /** The status, or `unhandled` when no handler matched. */
  status: number | 'unhandled';
  contentType: string | null;
  body: string;
}

export interface ScenarioResult {
  answers: ScenarioAnswer[];
  warnings: string[];
}

export async function runScenario(
  createGiteaHandlers: typeof CreateHandlers,
  getResponse: typeof GetResponse,
  { examplesBase, sandboxBase, requests }: ScenarioInput,
): Promise<ScenarioResult> {
  const warnings: string[] = [];
  const onWarning = (line: string): void => void warnings.push(line);
  const sources = [
    {
      source: 'examples' as const,
      base: examplesBase,
      gitea: createGiteaHandlers({ baseUrl: examplesBase, onWarning }),
    },
    {
      source: 'sandbox' as const,
      base: sandboxBase,
      gitea: createGiteaHandlers({ baseUrl: sandboxBase, sandbox: true, onWarning }),
    },
  ];
  const answers: ScenarioAnswer[] = [];
  try {
    for (const { source, base, gitea } of sources) {
      for (const { label, method, path, headers, body } of requests) {
        const request = new Request(`${base}${path}`, { method, headers, ...(body ? { body } : {}) });
        const response = await getResponse(gitea.handlers, request);
        answers.push({
          label,
          source,
          status: response?.status ?? 'unhandled',
          contentType: response?.headers.get('content-type') ?? null,
          body: response ? await response.text() : '',
        });
      }
    }
  } finally {
    await Promise.all(sources.map(({ gitea }) => gitea.close()));
  }
  return { answers, warnings };
}
