// The documented answer a request gets, as Prism 5.12's static mocker chooses it (examples-negotiation.test.ts).
import { sample, SchemaSizeExceededError } from '@stoplight/json-schema-sampler';
import type { IHttpOperation, IHttpOperationResponse, IMediaTypeContent, INodeExample } from '@stoplight/types';
import accepts from 'accepts';
import contentType from 'content-type';
import { Refusal } from '../common/refusal.js';

/** An answer as Prism's mocker gives it (a declared header without a value is null), or why there is none. */
export type Mocked =
  | { ok: true; output: { statusCode: number; headers: Record<string, unknown>; body?: unknown } }
  | { ok: false; status: number; message: string };

/** The status asked for (`Prefer: code`, or that of the example asked for), the example (`Prefer: example`), Accept. */
export type Wanted = { code?: number; exampleKey?: string; accept?: string };

/** A failure as Prism words its ProblemJsonError: its detail, else its title; the cause is its `String(error)`. */
function refusal(type: string, status: number, detail: string, title: string): Refusal {
  return new Refusal(status, detail || title, { cause: `https://stoplight.io/prism/errors#${type}: ${title}` });
}

const notFound = (detail: string): Refusal =>
  refusal('NOT_FOUND', 404, detail, 'The server cannot find the requested content');

/** A `2XX` range answered as 200, as Prism answers it. */
const normalized = (response?: IHttpOperationResponse): IHttpOperationResponse | undefined =>
  response && /^\dXX$/.test(response.code) ? { ...response, code: `${response.code.charAt(0)}00` } : response;

/** A range (`2XX`) or `default` answered with the status it stands for. */
const answeredAs = (response: IHttpOperationResponse | undefined, code: string) => response && { ...response, code };

/** `type/subtype` with only its `q`, or undefined for what is no media type. */
function withoutParameters(mediaType: string): string | undefined {
  try {
    const { type, parameters } = contentType.parse(mediaType);
    if (!Object.keys(parameters).some((key) => key !== 'q')) return undefined;
    return contentType.format({ type, parameters: 'q' in parameters ? { q: parameters.q! } : {} });
  } catch {
    // Prism throws here; an Accept that is no media type meets nothing instead.
    return undefined;
  }
}

/** The content the media types prefer; failing that, the same without their parameters (but `q`). */
function bestContent(
  contents: readonly IMediaTypeContent[],
  mediaTypes: readonly string[],
): IMediaTypeContent | undefined {
  const offered = contents.map(({ mediaType }) => mediaType);
  const best = accepts({ headers: { accept: mediaTypes.join(',') } } as never).type(offered);
  const found = best ? contents.find((content) => content.mediaType === best) : undefined;
  if (found) return found;
  const bare = mediaTypes.flatMap((mediaType) => withoutParameters(mediaType) ?? []);
  return bare.length > 0 ? bestContent(contents, bare) : undefined;
}

type Choice = {
  code: string;
  headers: IHttpOperationResponse['headers'];
  mediaType?: string;
  example?: INodeExample | { value?: undefined };
  schema?: IMediaTypeContent['schema'];
};

const scalar = (value: unknown): unknown => (typeof value === 'number' || typeof value === 'string' ? value : null);

export function documentedAnswer(operation: IHttpOperation, { code, exampleKey, accept }: Wanted): Mocked {
  // Prism splits Accept at commas and keeps each piece as it is, spaces included.
  const mediaTypes = accept ? accept.split(',') : undefined;
  const fromContent = (code: string, headers: Choice['headers'], content: IMediaTypeContent): Choice => {
    const { mediaType, schema } = content;
    const examples = (content.examples ?? []) as INodeExample[];
    const example = exampleKey === undefined ? examples[0] : examples.find((candidate) => candidate.key === exampleKey);
    if (exampleKey !== undefined && !example)
      throw notFound(`Response for contentType: ${mediaType} and exampleKey: ${exampleKey} does not exist.`);
    return { code, headers, mediaType, ...(example ? { example } : {}), ...(schema ? { schema } : {}) };
  };
  /** The content and example of one response for the Accept header's media types (none: the default media type). */
  const forResponse = ({ code, headers = [], contents }: IHttpOperationResponse): Choice => {
    if (mediaTypes === undefined) {
      const content =
        contents &&
        (contents.find((candidate) => candidate.mediaType === '*/*') ??
          bestContent(contents, ['application/json', '*/*']));
      return content
        ? fromContent(code, headers, content)
        : { code, headers, mediaType: 'text/plain', example: { value: undefined } };
    }
    const content = contents && bestContent(contents, mediaTypes);
    if (content) {
      const choice = fromContent(code, headers, content);
      return choice.mediaType === '*/*' ? { ...choice, mediaType: 'text/plain' } : choice;
    }
    if (!contents?.length || code === '204' || mediaTypes.some((type) => type.includes('*/*')))
      return { code, headers };
    const title = 'The server cannot produce a representation for your accept header';
    throw refusal('NOT_ACCEPTABLE', 406, `Unable to find content for ${mediaTypes.join(',')}`, title);
  };
  const { responses } = operation;
  const coded = (wanted: string) => responses.find((response) => response.code === wanted);
  const withoutCode = (): Choice => {
    const twos = responses.filter((response) => /^2(\d\d|XX)$/.test(response.code));
    const lowest = twos.length > 0 ? twos.reduce((low, next) => (low.code <= next.code ? low : next)) : undefined;
    const response = normalized(lowest) ?? answeredAs(coded('default'), '200') ?? normalized(responses[0]);
    if (!response)
      throw refusal('NO_RESPONSE_RESPONSE_DEFINED', 500, '', 'No response defined for the selected operation');
    return forResponse(response);
  };
  const choose = (): Choice => {
    if (code === undefined) return withoutCode();
    const status = String(code);
    const response =
      coded(status) ?? answeredAs(coded(`${status.charAt(0)}XX`), status) ?? answeredAs(coded('default'), status);
    if (!response) throw notFound(`Requested status code ${code} is not defined in the document.`);
    try {
      return forResponse(response);
    } catch {
      // Prism then tries the answer it gives without a code, and words a second failure this way.
      try {
        return withoutCode();
      } catch (error) {
        const said = error instanceof Refusal ? String(error.cause) : String(error);
        throw new Error(`${said}. We tried default response, but we got ${said}`);
      }
    }
  };
  /** A sample of `schema`, as Prism's static generator makes one. */
  const sampled = (schema: NonNullable<IMediaTypeContent['schema']>, what: 'body' | 'header'): unknown => {
    try {
      return sample(schema as never, { ticks: 2500 }, operation);
    } catch (error) {
      const message = `Unable to generate ${what} for response. The schema is too complex to generate.`;
      if (error instanceof SchemaSizeExceededError)
        throw refusal('SCHEMA_TOO_COMPLEX', 500, message, 'Schema too complex');
      // Prism answers any other failure of the sampler with its message.
      throw refusal('UNKNOWN', 500, '', error instanceof Error ? error.message : String(error));
    }
  };
  try {
    const choice = choose();
    const headers: Record<string, unknown> = {};
    for (const { name, schema, examples } of choice.headers ?? []) {
      const first = examples?.[0];
      const made = schema && first === undefined ? sampled(schema, 'header') : null;
      headers[name] = !schema ? null : first ? ('value' in first ? first.value : null) : scalar(made);
    }
    if (choice.mediaType) headers['Content-type'] = choice.mediaType;
    if (operation.deprecated) headers.deprecation = 'true';
    const exampleValue = choice.example?.value;
    const body = exampleValue !== undefined ? exampleValue : choice.schema ? sampled(choice.schema, 'body') : undefined;
    return { ok: true, output: { statusCode: Number.parseInt(choice.code, 10), headers, body } };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, status: error.status, message: error.message };
    if (error instanceof Error && error.constructor === Error)
      return { ok: false, status: 500, message: error.message };
    throw error;
  }
}
