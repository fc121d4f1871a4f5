// Credentials and where they may go: the Authorization header as Gitea reads it, the checks that
// refuse what a header cannot carry, and base URLs that would leak credentials. Every refusal is
// a TypeError naming the option and the problem, never the value.

export type Auth = (
  | { token: string }
  | {
      username: string;
      password: string;
      /** The one-time code for two-factor accounts, or a function giving the current one. */
      otp?: string | (() => string | Promise<string>);
    }
) & {
  /** Act as this user (site administrators only). */
  sudo?: string;
};

/** What a value may be refused for, tested in this order; a rule set is a bit mask of their indexes. */
const PROBLEMS: [RegExp, string][] = [
  [/^$/, 'is empty'],
  [/[\r\n]/, 'contains a line break'],
  [/:/, 'contains a colon'],
  [/\s/, 'contains whitespace'],
  [/[\0-\x1f\x7f]/, 'contains a control character'],
  [/[^\x21-\x7e]/, 'contains a character outside printable ASCII'],
  [/[^\0-\xff]/, 'contains a character outside Latin-1'],
];
/** A token, one-time code or Sudo user: Gitea reads each as one word of printable ASCII (empty, line break, whitespace, control, non-ASCII). */
export const WORD = 0b0111011;
/** A Basic user name: Basic splits at the first colon (empty, colon, control). */
const USER = 0b0010101;
/** Any header value: fetch refuses these, quoting the value in its error (line break, control, beyond Latin-1). */
export const FIELD = 0b1010010;

/** Throws `TypeError("<name> <problem>")` when there is a problem. */
function refuse(name: string, problem: unknown): void {
  if (problem) throw new TypeError(`${name} ${problem}`);
}

/** Refuses a value that is not text, or breaks one of `rules`; a password needs none beyond being text. */
export function check(name: string, value: unknown, rules: number): void {
  refuse(
    name,
    typeof value !== 'string'
      ? 'is not a string'
      : // UTF-8 would silently replace an unpaired surrogate.
        value.isWellFormed()
        ? PROBLEMS.find(([pattern], i) => (rules >> i) & 1 && pattern.test(value))?.[1]
        : 'contains an unpaired surrogate',
  );
}

/** Refuses credentials that cannot be sent as they are, before anything is sent. */
export function checkAuth(auth: Auth): void {
  // Not `'token' in auth` on a string: that TypeError would quote it.
  if (typeof auth !== 'object' || !auth) refuse('auth', 'is not an object: give { token } or { username, password }');
  if ('token' in auth) check('auth.token', auth.token, WORD);
  else if ('username' in auth || 'password' in auth) {
    check('auth.username', auth.username, USER);
    check('auth.password', auth.password, 0);
    if (auth.otp !== undefined && typeof auth.otp !== 'function') check('auth.otp', auth.otp, WORD);
  } else refuse('auth', 'needs a token, or a username and a password');
  if (auth.sudo !== undefined) check('auth.sudo', auth.sudo, WORD);
}

/**
 * Refuses a base URL that is not an absolute http(s) URL, carries user info (which fetch would
 * quote in its errors), or has a query or fragment; and, with `credentials`, one in plain http to
 * anything but this machine.
 */
export function checkBaseUrl(name: string, baseUrl: unknown, credentials: boolean): void {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl as string);
  } catch {
    // The URL parser's own error quotes the input, which may hold a password: not passed on.
  }
  refuse(
    name,
    !url || typeof baseUrl !== 'string'
      ? 'is not an absolute URL'
      : !/^https?:$/.test(url.protocol)
        ? 'is not an http: or https: URL'
        : url.username || url.password
          ? 'contains credentials (user info): pass them as auth instead'
          : /[?#]/.test(baseUrl)
            ? 'has a query or fragment'
            : credentials &&
              url.protocol === 'http:' &&
              !isLoopbackHost(url.hostname) &&
              `would send credentials over plain http to ${url.hostname}: use https, or allowInsecureHttp`,
  );
}

/** Whether a URL's host name is this machine: `localhost`, an IPv4 loopback address or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i.test(hostname);
}

/** The `Authorization` value: `token …`, or HTTP Basic for any UTF-8 name and password. */
export function authorization(auth: Auth): string {
  // btoa takes Latin-1 only; unescape(encodeURIComponent()) turns the text into its UTF-8 bytes.
  return 'token' in auth
    ? `token ${auth.token}`
    : `Basic ${btoa(unescape(encodeURIComponent(`${auth.username}:${auth.password}`)))}`;
}
