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

type Rule = [pattern: RegExp, problem: string];
const EMPTY: Rule = [/^$/, 'is empty'];
const LINE_BREAK: Rule = [/[\r\n]/, 'contains a line break'];
const CONTROL: Rule = [/[\0-\x1f\x7f]/, 'contains a control character'];
/** Any header value: fetch refuses these, quoting the value in its error. */
const FIELD: Rule[] = [LINE_BREAK, CONTROL, [/[^\0-\xff]/, 'contains a character outside Latin-1']];
/** A token, one-time code or Sudo user: Gitea reads each as one word of printable ASCII. */
const WORD: Rule[] = [EMPTY, LINE_BREAK, [/\s/, 'contains whitespace'], CONTROL, [/[^\x21-\x7e]/, 'contains a character outside printable ASCII']];
/** A Basic user name: Basic splits at the first colon. */
const USER: Rule[] = [EMPTY, [/:/, 'contains a colon'], CONTROL];

/** Throws `TypeError("<name> <problem>")` when `value` breaks a rule; a password needs none beyond being text. */
function check(name: string, value: unknown, rules: Rule[]): void {
  let problem: string | undefined;
  if (typeof value !== 'string') problem = 'is not a string';
  else {
    try {
      encodeURIComponent(value); // UTF-8 would silently replace an unpaired surrogate
      problem = rules.find(([pattern]) => pattern.test(value))?.[1];
    } catch {
      problem = 'contains an unpaired surrogate';
    }
  }
  if (problem) throw new TypeError(`${name} ${problem}`);
}

export function checkHeader(name: string, value: unknown): void {
  check(`headers.${name}`, value, FIELD);
}

/** A one-time code, as given or as its function returned it. */
export function checkOtp(code: unknown, fromFunction: boolean): asserts code is string {
  check(fromFunction ? 'the code auth.otp() returned' : 'auth.otp', code, WORD);
}

/** Refuses credentials that cannot be sent as they are, before anything is sent. */
export function checkAuth(auth: Auth): void {
  // Not `'token' in auth` on a string: that TypeError would quote it.
  if (typeof auth !== 'object' || auth === null) throw new TypeError('auth is not an object: give { token } or { username, password }');
  if ('token' in auth) check('auth.token', auth.token, WORD);
  else if ('username' in auth || 'password' in auth) {
    check('auth.username', auth.username, USER);
    check('auth.password', auth.password, []);
    if (auth.otp !== undefined && typeof auth.otp !== 'function') checkOtp(auth.otp, false);
  } else throw new TypeError('auth needs a token, or a username and a password');
  if (auth.sudo !== undefined) check('auth.sudo', auth.sudo, WORD);
}

/** Refuses a base URL that is not an absolute http(s) URL, carries user info, or has a query or fragment. */
export function checkBaseUrl(name: string, baseUrl: unknown): void {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl as string);
  } catch {
    // The URL parser's own error quotes the input, which may hold a password: not passed on.
  }
  const problem =
    !url || typeof baseUrl !== 'string'
      ? 'is not an absolute URL'
      : !/^https?:$/.test(url.protocol)
        ? 'is not an http: or https: URL'
        : url.username || url.password
          ? 'contains credentials (user info): pass them as auth instead'
          : /[?#]/.test(baseUrl)
            ? 'has a query or fragment'
            : '';
  if (problem) throw new TypeError(`${name} ${problem}`);
}

/** The `Authorization` value: `token …`, or HTTP Basic for any UTF-8 name and password (btoa takes Latin-1 only). */
export function authorization(auth: Auth): string {
  if ('token' in auth) return `token ${auth.token}`;
  let binary = '';
  for (const byte of new TextEncoder().encode(`${auth.username}:${auth.password}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** Refuses to send credentials over plain HTTP to anything but this machine. */
export function assertSecure(baseUrl: string, allowInsecureHttp?: boolean): void {
  const { protocol, hostname } = new URL(baseUrl);
  if (protocol === 'http:' && !allowInsecureHttp && !/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i.test(hostname)) {
    throw new TypeError(`credentials over plain http to ${hostname}: use https or allowInsecureHttp`);
  }
}
