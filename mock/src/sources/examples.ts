// The examples answer source: Prism's mocker answers each request with the document's examples
// (or data generated from the schemas), and list answers are paged as Gitea pages them.
import type { IHttpConfig } from '@stoplight/prism-http';
import { agreeWithPath, makeCoherent } from './coherence.js';
import { apiError } from '../front/errors.js';
import { paginate } from './pagination.js';
import type { Prism } from '../front/prism.js';
import { codeOfExample } from '../front/prefer.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from './source.js';

export interface ExamplesOptions {
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data repeatable. */
  seed?: string;
}

export function createExamples({ http, core }: Prism, context: SourceContext, options: ExamplesOptions = {}): AnsweringSource {
  // Prism's own logging costs half its throughput and would leak request details. The front
  // validates requests and answers itself, so Prism only mocks.
  const prism = http.createInstance(
    { validateRequest: false, validateResponse: false, checkSecurity: false, errors: false, upstreamProxy: undefined, isProxy: false, mock: { dynamic: false } },
    { logger: core.createLogger('gitea-mock', { level: 'silent' }) },
  );
  return {
    strict: false,
    async answer({ op, request, url, preference }: SourceRequest): Promise<Answer> {
      const code = preference.code ?? (preference.example === undefined ? undefined : codeOfExample(op, preference.example));
      // A fresh config per request: Prism's mocker writes the request's Accept into it.
      const config: IHttpConfig = {
        validateRequest: false,
        validateResponse: false,
        checkSecurity: false,
        errors: false,
        upstreamProxy: undefined,
        isProxy: false,
        mock: {
          dynamic: preference.dynamic ?? options.dynamic ?? false,
          ...(options.seed === undefined ? {} : { seed: options.seed }),
          ...(code === undefined ? {} : { code }),
          ...(preference.example === undefined ? {} : { exampleKey: preference.example }),
        },
      };
      // json-schema-faker resolves references where they stand in the schemas it is given: a
      // generated answer gets a copy, so the table the front validates with stays as it was.
      const operation = config.mock.dynamic ? structuredClone(op.operation) : op.operation;
      const result = await prism.request(request, [operation], config)();
      if (result._tag === 'Left') {
        // Prism's own refusals (406 for an Accept it cannot meet) in the service's dialect.
        const error = result.left as Error & { status?: number; detail?: string };
        return { status: error.status ?? 500, type: 'application/json', body: apiError(context.docsUrl(), error.detail || error.message) };
      }
      const { output } = result.right;
      const headers: Record<string, string> = {};
      let contentType: string | undefined;
      for (const [name, value] of Object.entries(output.headers ?? {})) {
        if (name.toLowerCase() === 'content-type') contentType = String(value);
        else headers[name] = String(value);
      }
      let body = output.body;
      // Generated records made to agree with the request and with themselves; the documented examples already do.
      if (config.mock.dynamic && preference.example === undefined && output.statusCode < 300) {
        agreeWithPath(op.path, request.url.path, body);
        makeCoherent(body);
      }
      if (op.paginated && output.statusCode === 200 && Array.isArray(body)) {
        const page = paginate(body, url);
        body = page.items;
        delete headers.Link;
        delete headers['X-Total-Count'];
        Object.assign(headers, page.headers);
      }
      const type = contentType === undefined ? undefined : (contentType.split(';')[0] ?? '').trim();
      return { status: output.statusCode, headers, ...(type === undefined || body === undefined ? {} : { type, body }) };
    },
  };
}
