// The examples answer source, in Node and browsers; generated answers need Prism's generator, which only Node loads.
import type { IHttpOperation } from '@stoplight/types';
import type { IHttpRequest } from '@stoplight/prism-http';
import { agreeWithPath, makeCoherent } from './coherence.js';
import { apiError, errorAnswer } from '../front/errors.js';
import { namesNothing } from '../front/validation.js';
import { documentedAnswer, type Mocked, type Wanted } from './negotiation.js';
import { paginate } from './pagination.js';
import { codeOfExample } from '../front/conditions.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from '../front/app.js';

/** Generated answers for a request: Prism's mocker in its dynamic mode (dynamic.ts). */
export type Generator = (
  request: IHttpRequest,
  operation: IHttpOperation,
  wanted: Omit<Wanted, 'accept'> & { seed?: string },
) => Promise<Mocked>;

/** Why a browser cannot generate data: said by the handlers' factory and the answer to `Prefer: dynamic=true`. */
export const NO_GENERATOR =
  "answers generated from the schemas (dynamic) need gitea-mock in Node: they come from Prism's generator, which does not run in a browser; the documented examples answer here";

/** The source; `generator` loads the generator of dynamic data on first use, where the runtime has one (Node). */
export async function createExamples(
  context: SourceContext,
  options: { dynamic?: boolean; seed?: string; generator?: (() => Promise<Generator>) | undefined } = {},
): Promise<AnsweringSource> {
  let generator: Promise<Generator> | undefined;
  const generate = (): Promise<Generator> | undefined =>
    options.generator ? (generator ??= options.generator()) : undefined;
  // Serving generated data, it loads now so the first answer does not wait; else on the first `Prefer: dynamic=true`.
  if (options.dynamic) await generate();

  return {
    strict: false,
    async answer({ op, request, url, preference }: SourceRequest): Promise<Answer> {
      // An id Gitea cannot read as a number names nothing on any server: the answer is its 404.
      const unnamed = namesNothing(op.operation, request.url.path) ? 404 : undefined;
      const code =
        preference.code ?? (preference.example === undefined ? unnamed : codeOfExample(op, preference.example));
      const wanted = {
        ...(code === undefined ? {} : { code }),
        ...(preference.example === undefined ? {} : { exampleKey: preference.example }),
      };
      const dynamic = preference.dynamic ?? options.dynamic ?? false;
      const loading = dynamic ? generate() : undefined;
      if (dynamic && !loading) return errorAnswer(context.docsUrl(), 400, NO_GENERATOR);
      const accept = Object.entries(request.headers ?? {}).find(([name]) => name.toLowerCase() === 'accept')?.[1];
      // json-schema-faker resolves references in place: it gets a copy, so the front's table stays as it was.
      const seed = options.seed === undefined ? {} : { seed: options.seed };
      const mocked: Mocked = loading
        ? await (await loading)(request, structuredClone(op.operation), { ...wanted, ...seed })
        : documentedAnswer(op.operation, { ...wanted, ...(accept === undefined ? {} : { accept }) });
      // Refusals of the negotiation (406 for an Accept it cannot meet) in the service's dialect.
      if (!mocked.ok)
        return { status: mocked.status, type: 'application/json', body: apiError(context.docsUrl(), mocked.message) };
      const { output } = mocked;
      const headers: Record<string, string> = {};
      let type: string | undefined;
      for (const [name, value] of Object.entries(output.headers)) {
        if (name.toLowerCase() === 'content-type') type = (String(value).split(';')[0] ?? '').trim();
        else headers[name] = String(value);
      }
      let body = output.body;
      // Generated records made to agree with the request and with themselves; the documented examples already do.
      if (dynamic && preference.example === undefined && output.statusCode < 300) {
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
      const typed = type === undefined || body === undefined ? {} : { type, body };
      return { status: output.statusCode, headers, ...typed };
    },
  };
}
