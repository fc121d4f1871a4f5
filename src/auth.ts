// Authorization headers as Gitea reads them, and the guard against sending them in clear text.

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
