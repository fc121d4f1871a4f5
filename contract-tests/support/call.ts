// One API request as `token <token>`, with a JSON body or none, for suites that talk to several
// mocks: the answer's status, headers and body (parsed when it is JSON).
export interface Reply {
  status: number;
  headers: Headers;
  // Whatever the answer holds: each suite reads what it expects.
  body: any;
}

export async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `token ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json') && text !== '';
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
}
