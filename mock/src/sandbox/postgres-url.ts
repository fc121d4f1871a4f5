// `--state postgres://user:password@host:port/database`, read once: what may be shown of it (never
// its password), and the password taken out of any text. PGPASSWORD or ~/.pgpass keep it off the command line.
import { REDACTION_MARK } from '../common/redaction.js';

export const isPostgresUrl = (state: string): boolean => /^postgres(ql)?:\/\//i.test(state);

export type PostgresTarget = ReturnType<typeof postgresTarget>;

const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

export function postgresTarget(url: string) {
  // URL's error carries the input, password included: a message of our own instead.
  if (!URL.canParse(url))
    throw new Error(
      '--state is not a PostgreSQL URL that can be read; give postgres://user@host:port/database (the password in PGPASSWORD, or after the user: user:password@)',
    );
  const parsed = new URL(url);
  const where = `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
  const secrets = [parsed.password, parsed.searchParams.get('password') ?? '']
    .flatMap((secret) => [secret, safeDecode(secret), encodeURIComponent(safeDecode(secret))])
    .filter((secret) => secret.length > 0)
    // The longest first: a password may hold another spelling of itself.
    .sort((a, b) => b.length - a.length);
  const timeout = parsed.searchParams.get('statement_timeout');
  // Every statement stays bounded: PostgreSQL's 0 (no bound) is refused, as is any other unit.
  if (timeout !== null && !/^[1-9][0-9]{0,8}$/.test(timeout))
    throw new Error(`--state: statement_timeout=${timeout} is not a whole number of milliseconds from 1`);
  return {
    // `postgres://alice@db.example:5432/sandbox`, and `db.example:5432`.
    shown: `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${where}${parsed.pathname}`,
    where,
    /** The text with the password, in every spelling the URL gave it, replaced by the redaction mark. */
    redact: (text: string) => secrets.reduce((result, secret) => result.split(secret).join(REDACTION_MARK), text),
    statementTimeoutMs: timeout === null ? undefined : Number(timeout),
  };
}
