// What createGiteaClient refuses before anything is sent: credentials that cannot go into an HTTP
// header as they are, and base URLs that are not absolute http(s) URLs or carry credentials. Each
// refusal is a TypeError naming the option and the problem, and no rendering of it holds the value.
import { describe, expect, it } from 'vitest';
import { createGiteaClient, type GiteaClientOptions } from '../../src/index.js';
import { useFaultServer } from '../support/fault-server.js';
import { expectNoSecret } from '../support/renderings.js';

const fault = useFaultServer();

/** Creates the client and makes one call; resolves to what was thrown, checking nothing was sent. */
async function refusal(options: Partial<GiteaClientOptions>, init: Record<string, unknown> = {}): Promise<unknown> {
  try {
    const client = createGiteaClient({ baseUrl: fault.current.baseUrl, retry: 0, ...options } as GiteaClientOptions);
    await (client.GET as (path: string, init: unknown) => Promise<unknown>)('/admin/orgs', init);
  } catch (error) {
    expect(fault.current.received).toEqual([]);
    return error;
  }
  throw new Error('expected the client to refuse');
}

describe('credentials a header cannot carry are refused before sending, without the value', () => {
  it.each([
    [
      'a line break in a token',
      { auth: { token: 'tok_SECRET\r\nX: 1' } },
      'auth.token contains a line break',
      'tok_SECRET\r\nX: 1',
    ],
    [
      'a NUL byte in a token',
      { auth: { token: 'tok_SECRET\0more' } },
      'auth.token contains a control character',
      'tok_SECRET\0more',
    ],
    ['a space in a token', { auth: { token: 'tok_SECRET more' } }, 'auth.token contains whitespace', 'tok_SECRET more'],
    [
      'a non-ASCII token',
      { auth: { token: 'tök_SECRET' } },
      'auth.token contains a character outside printable ASCII',
      'tök_SECRET',
    ],
    [
      'a token beyond Latin-1',
      { auth: { token: 'tok_SECRET_密' } },
      'auth.token contains a character outside printable ASCII',
      'tok_SECRET_密',
    ],
    ['an empty token', { auth: { token: '' } }, 'auth.token is empty', undefined],
    [
      'a token that is not a string (an unset variable)',
      { auth: { token: undefined } },
      'auth.token is not a string',
      undefined,
    ],
    [
      'a line break in a one-time code',
      { auth: { username: 'alice', password: 'pw-SECRET-1', otp: '12\n3456' } },
      'auth.otp contains a line break',
      '12\n3456',
    ],
    [
      'a colon in a user name',
      { auth: { username: 'ali:ce', password: 'pw-SECRET-2' } },
      'auth.username contains a colon',
      'pw-SECRET-2',
    ],
    [
      'an empty user name',
      { auth: { username: '', password: 'pw-SECRET-3' } },
      'auth.username is empty',
      'pw-SECRET-3',
    ],
    [
      'an unpaired surrogate in a password',
      { auth: { username: 'alice', password: 'pw-SECRET-\ud800' } },
      'auth.password contains an unpaired surrogate',
      'pw-SECRET-\ud800',
    ],
    [
      'a line break in a Sudo user',
      { auth: { token: 'tok_SECRET_ok', sudo: 'bob\r\nX: 1' } },
      'auth.sudo contains a line break',
      'tok_SECRET_ok',
    ],
    ['neither a token nor a user name', { auth: {} }, 'auth needs a token, or a username and a password', undefined],
    [
      'a bare string instead of { token }',
      { auth: 'tok_SECRET_bare' },
      'auth is not an object: give { token } or { username, password }',
      'tok_SECRET_bare',
    ],
    [
      'a line break in an extra header',
      { headers: { 'X-Api-Key': 'key_SECRET\n' } },
      'headers.X-Api-Key contains a line break',
      'key_SECRET\n',
    ],
  ] as const)('%s', async (_case, options, message, secret) => {
    const error = await refusal(options as Partial<GiteaClientOptions>);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe(message);
    if (secret) expectNoSecret(error, [secret]);
  });

  it('checks each code a one-time-code function returns, at call time', async () => {
    const code = '12\n3456';
    const error = await refusal({ auth: { username: 'alice', password: 'pw-SECRET-4', otp: () => code } });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('the code auth.otp() returned contains a line break');
    expectNoSecret(error, [code, 'pw-SECRET-4']);
  });

  it('redacts what a one-time-code function throws', async () => {
    const error = await refusal({
      auth: {
        username: 'alice',
        password: 'pw-SECRET-5',
        otp: () => {
          throw new Error('authenticator for alice:pw-SECRET-5 is locked', { cause: new Error('pw-SECRET-5') });
        },
      },
    });
    expect((error as Error).message).toBe('authenticator for alice:[REDACTED] is locked');
    expectNoSecret(error, ['pw-SECRET-5']);
  });
});

describe('base URLs', () => {
  it('refuses user info in baseUrl, where fetch would quote the password in its error', async () => {
    const error = await refusal({ baseUrl: 'http://u:supersecretpw@127.0.0.1:4010/api/v1' });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('baseUrl contains credentials (user info): pass them as auth instead');
    expectNoSecret(error, ['supersecretpw']);
  });

  it.each([
    ['a relative URL', '/api/v1', 'baseUrl is not an absolute URL'],
    ['an unparsable one that holds a password', 'http://u:supersecretpw@[bad/api/v1', 'baseUrl is not an absolute URL'],
    ['another scheme', 'ftp://gitea.example.org/api/v1', 'baseUrl is not an http: or https: URL'],
    ['a query', 'https://gitea.example.org/api/v1?x=1', 'baseUrl has a query or fragment'],
    ['not a string', undefined, 'baseUrl is not an absolute URL'],
  ])('refuses %s', async (_case, baseUrl, message) => {
    const error = await refusal({ baseUrl } as Partial<GiteaClientOptions>);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe(message);
    expectNoSecret(error, ['supersecretpw']);
  });

  it('checks a per-call baseUrl the same way', async () => {
    const error = await refusal(
      { auth: { token: 'tok_SECRET_ok' } },
      { baseUrl: `http://u:supersecretpw@${new URL(fault.current.baseUrl).host}/api/v1` },
    );
    expect((error as TypeError).message).toBe(
      'init.baseUrl contains credentials (user info): pass them as auth instead',
    );
    expectNoSecret(error, ['supersecretpw', 'tok_SECRET_ok']);
  });
});

describe('what is accepted', () => {
  it('sends a well-formed token, a Basic password with spaces and Unicode, a one-time code and Sudo unchanged', async () => {
    const client = createGiteaClient({
      baseUrl: fault.current.baseUrl,
      auth: { username: 'zoë', password: ' pass wörd\t密 ', otp: '424242', sudo: 'bob' },
      retry: 0,
    });
    await client.GET('/admin/orgs');
    const [request] = fault.current.received;
    expect(Buffer.from(String(request!.headers.authorization).slice(6), 'base64').toString('utf8')).toBe(
      'zoë: pass wörd\t密 ',
    );
    expect(request!.headers['x-gitea-otp']).toBe('424242');
    expect(request!.headers.sudo).toBe('bob');
  });

  it('accepts an empty password (Gitea then reads the user name as a token)', async () => {
    const client = createGiteaClient({
      baseUrl: fault.current.baseUrl,
      auth: { username: 'tok_4f1e9a', password: '' },
      retry: 0,
    });
    await client.GET('/admin/orgs');
    expect(fault.current.received[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('tok_4f1e9a:').toString('base64')}`,
    );
  });
});
