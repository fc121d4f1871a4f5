// Every command's options in one table, so an option of another command is refused by name; secrets are never options.
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SERVER_PROFILES, type ServerProfile } from 'gitea-contract';
import { attempt } from './attempt.js';
import { Refusal, usageError } from './refusal.js';

export type Command = 'mock' | 'sandbox' | 'proxy' | 'verify' | 'webhooks' | 'trigger' | 'postgres';

// An option a line: name, short name, value (`<url>...` repeatable; none: a flag), default, commands (GROUPS), help.
const TABLE = `
--port -p <n> =4010                | listen                | port to listen on; 0 picks a free one
--host -h <addr> =127.0.0.1        | listen                | address to listen on
--dynamic -d                       | mock                  | generate answers from the schemas instead of the examples
--latency <ms>                     | serve                 | hold every answer this long, or a random time in a range such as 250-300 (at most 60000)
--faults <share>                   | serve                 | answer a random share of requests (such as 0.1) with a fault: reset, 502, 503 or 504; 0.1:503,reset picks among some
--seed <s>                         | serve                 | make dynamic answers (gitea-mock --dynamic), latency and faults repeatable
--max-held <n>                     | serve                 | requests held for a delay (Prefer: delay or --latency) at once; past it a delayed request is answered 503 at once (default 2048, at most half the connections)
--max-held-per-credential <n>      | serve                 | requests of one credential held at once; past it 429 (default a quarter of --max-held)
--max-body-bytes-in-flight <n>     | serve                 | bytes of request bodies held at once, being read or waiting for their answer, such as 256M; past it 503 (default an eighth of Node's heap)
--state <dir>                      | sandbox               | keep the worlds in the folder <dir>, a file per world saved after each of its writes; --state <url> keeps them in PostgreSQL, shared by every gitea-mock on the database: postgres://user@host:port/database (the password in PGPASSWORD, ~/.pgpass or the URL)
--max-worlds <n> =100              | sandbox               | worlds kept; the least recently used goes
--max-world-bytes <n>              | sandbox               | bytes one world may hold, such as 64K or 16M (default 16M)
--webhook <url>...                 | sandbox               | a system hook: every webhook event of every world is delivered there too (repeatable)
--webhook-allowed-hosts <list>     | sandbox               | hosts deliveries may reach, as Gitea's ALLOWED_HOST_LIST: loopback, private, external, *, CIDR ranges, host names (default loopback)
--webhook-timeout <s> =5           | sandbox               | seconds a delivery may take
--strict                           | proxy                 | answer a request that breaks the contract with 422 instead of forwarding it
--fail-on-violation                | proxy                 | exit 1 when stopped if any exchange broke the contract, 2 if no exchange of it was checked (for CI)
--upstream-timeout <s> =30         | proxy                 | longest silence of the upstream, or of a client's upload, in seconds
--exchange-timeout <s> =300        | proxy                 | longest exchange, request to last byte of the answer, in seconds
--upstream-connections <n> =64     | proxy                 | most connections to the upstream at once
--cors-origin <origin>...          | proxy                 | a browser origin to answer besides this machine's (such as https://app.example.org); repeatable
--forward-cookies                  | proxy                 | forward Cookie headers (a signed-in web session) to the upstream
--base-url <url>                   | verify                | the API root, ending in /api/v1 (required)
--repo <owner/name>                | verify trigger        | verify: a repository to read from (deploy key, workflow, comment); trigger: the one the event happens in
--key-id <n>                       | verify                | a deploy key to read; the ids and names not given are looked up where the server lists them
--team-id <n>                      | verify                | a team to read
--comment-id <n>                   | verify                | an issue comment to read
--workflow <file.yml>              | verify                | a workflow to read
--package <owner/type/name>        | verify                | a package to read
--allow-writes                     | verify                | also run operations that change data, inside --scratch-repo only
--scratch-repo <owner/name>        | verify                | the repository writes may touch (required with --allow-writes)
--collaborator <user>              | verify                | a user to add to the scratch repository with read access
--issue <n>                        | verify                | the issue the writes use in the scratch repository
--pull <n>                         | verify                | the pull request the writes use
--milestone-id <n>                 | verify                | the milestone the writes use
--hook-id <n>                      | verify                | the hook the writes use
--release-id <n>                   | verify                | the release the writes use
--fail-on-skip                     | verify                | exit 2 unless every operation it was asked to check was checked (not the writes without --allow-writes, nor those never run)
--timeout <s> =120                 | verify                | seconds the whole run may take
--request-timeout <s> =30          | verify                | seconds one request may take, within --timeout
--connect-timeout <s> =10          | verify                | seconds to wait for the server's answer to GET /version
--allow-insecure-http              | verify proxy          | talk plain http to a host off this machine (verify: sending the credentials; proxy: its upstream)
--forward <url>                    | webhooks              | send each delivery on to your app at this URL (its origin only) and answer with its answer
--report <file>                    | proxy verify webhooks | write a JSON report at the end: per operation (or webhook) the exchanges and violations by kind; verify: the skipped operations with their cause
--junit <file>                     | proxy verify webhooks | write the results as JUnit XML at the end, a test case per operation or delivery
--action <a>                       | trigger               | the event's action (opened, created, published …; default: the document's example's); push, create, delete, fork and status have none
--url <url> =http://127.0.0.1:4010 | trigger               | the sandbox
--data <dir>                       | postgres              | the cluster's folder (kept; made on the first start)
--database <name> =gitea_sandbox   | postgres              | the database made for the sandbox
--server <profile>                 | serve verify webhooks | the server to be (gitea-mock, sandbox) or to check against (proxy, verify, webhooks): ${SERVER_PROFILES.join(', ')} (default: gitea-1.27; the proxy and verify ask the server, the receiver reads each delivery's headers)
--quiet -q                         | serve webhooks        | no line per request or delivery (webhooks: but those that break the contract)
--help                             | all                   | show this help
`;

type Spec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean; arg?: string; fallback?: string };
const GROUPS: Record<string, Command[]> = {
  serve: ['mock', 'sandbox', 'proxy'],
  listen: ['mock', 'sandbox', 'proxy', 'webhooks', 'postgres'],
  all: ['mock', 'sandbox', 'proxy', 'verify', 'webhooks', 'trigger', 'postgres'],
};
/** The port's default where it is not 4010, and the variable read before it. */
const PORTS: Partial<Record<Command, [string, string]>> = { webhooks: ['PORT', '4011'], postgres: ['PGPORT', '5432'] };
const OPTIONS: Record<string, Spec & { commands: Command[]; help: string }> = {};
for (const line of TABLE.trim().split('\n')) {
  const [head = '', commands = '', help = ''] = line.split(/\s+\|\s+/);
  const [, name = '', short, arg, fallback] =
    /^--([a-z-]+)(?: -(\w))?(?: (<\S+>(?:\.\.\.)?))?(?: =(\S+))?$/.exec(head) ?? [];
  OPTIONS[name] = {
    type: arg ? 'string' : 'boolean',
    ...(short ? { short } : {}),
    ...(arg === undefined ? {} : arg.endsWith('...') ? { multiple: true, arg: arg.slice(0, -3) } : { arg }),
    ...(fallback === undefined ? {} : { fallback }),
    commands: commands.split(' ').flatMap((word) => GROUPS[word] ?? [word as Command]),
    help,
  };
}

const commandName = (command: Command): string => `gitea-mock${command === 'mock' ? '' : ` ${command}`}`;

/** Where each command's secrets come from, for an option that looks like one. */
const SECRETS: Record<Command, string> = {
  mock: 'gitea-mock takes none; the sandbox signs its deliveries with GITEA_WEBHOOK_SECRET',
  proxy: 'the proxy takes none; it passes on the credentials of the requests',
  sandbox: 'set GITEA_WEBHOOK_SECRET to the secret the deliveries are signed with',
  webhooks: "set GITEA_WEBHOOK_SECRET to the hook's secret, to check the signatures",
  verify: 'set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD (and GITEA_OTP for two-factor accounts)',
  trigger: 'set GITEA_TOKEN to the token of the sandbox world',
  postgres: 'set PGPASSWORD to the password of the server',
};
const CREDENTIAL_OPTION = /token|pass|secret|user|login|otp|auth|cred|api-?key/i;

/** `argv` parsed; what parseArgs refuses, a usage error that never quotes an argument that is no option (it may be a secret). */
function parsedArgs(command: Command, argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message = String(error) } = error as { code?: string; message?: string };
    const option =
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(message)?.[1] : undefined;
    if (option && CREDENTIAL_OPTION.test(option))
      throw usageError(
        `${option} is not an option: ${command === 'verify' ? 'credentials' : 'secrets'} come from the environment only, never the command line (where process lists and CI logs show them): ${SECRETS[command]}`,
      );
    const other = option?.slice(2) as Command;
    if (other in SECRETS) throw usageError(`${option} is not an option: run ${commandName(other)}`);
    throw usageError(message);
  }
}

/** Runs `check`; what it throws becomes a usage error after `what`. */
export function refusing<T>(what: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw usageError(`${what}${(error as Error).message}`);
  }
}

export function httpUrl(text: string, hint: string): URL {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !/^https?:$/.test(url.protocol)) throw usageError(hint);
  return url;
}

/** Why `file` cannot be written, or undefined when its folder is there and may be written in. */
export function outputFileProblem(file: string): string | undefined {
  const path = resolve(file);
  const folder = dirname(path);
  try {
    if (!statSync(folder).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(folder, constants.W_OK);
  } catch (error) {
    return `cannot write in ${folder} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  // A file not there yet will be made.
  return attempt(() => statSync(path))?.isDirectory() ? `${path} is a folder` : undefined;
}

/** `argv` parsed for `command`, an option of another command refused by name; each value read checked. */
export function parseCommand(command: Command, argv: readonly string[]) {
  const { values, positionals } = parsedArgs(command, argv);
  for (const [name, spec] of Object.entries(OPTIONS))
    if (values[name] !== undefined && !spec.commands.includes(command))
      throw usageError(
        `--${name} is an option of ${spec.commands.map(commandName).join(', ')}, not of ${commandName(command)}`,
      );
  const text = (name: string): string | undefined => (values[name] as string | undefined) ?? OPTIONS[name]!.fallback;
  return {
    positionals,
    help: values.help === true,
    text,
    flag: (name: string): boolean => values[name] === true,
    list: (name: string): string[] => (values[name] as string[] | undefined) ?? [],
    given: (name: string): boolean => values[name] !== undefined,
    count(name: string, digits = 6): number | undefined {
      const value = text(name);
      if (value !== undefined && !new RegExp(`^[1-9][0-9]{0,${digits - 1}}$`).test(value))
        throw usageError(`invalid --${name} "${value}": give a whole number from 1`);
      return value === undefined ? undefined : Number(value);
    },
    /** Seconds, decimals allowed, above 0 and at most a day: in milliseconds. */
    seconds(name: string): number {
      const value = text(name) ?? '';
      if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0 || Number(value) > 86_400)
        throw usageError(`--${name} takes a number of seconds above 0 (at most 86400), not "${value}"`);
      return Math.round(Number(value) * 1000);
    },
    bytes(name: string, example: string): number | undefined {
      const value = text(name);
      const match = /^([1-9][0-9]{0,11})([KMG]?)$/.exec(value ?? '0');
      if (value !== undefined && !match)
        throw usageError(
          `invalid --${name} "${value}": give a whole number of bytes, or of K, M or G (such as ${example})`,
        );
      return match ? Number(match[1]) * 1024 ** ' KMG'.indexOf(match[2] || ' ') : undefined;
    },
    /** A file written at the end: its folder is checked now, not once the run is over and its results are lost. */
    file(name: 'report' | 'junit'): string | undefined {
      const file = text(name);
      const problem = file === undefined ? undefined : outputFileProblem(file);
      if (problem) throw usageError(`--${name} ${file}: ${problem}`);
      return file;
    },
    server(): ServerProfile | undefined {
      const value = text('server');
      if (value !== undefined && !(SERVER_PROFILES as readonly string[]).includes(value))
        throw usageError(`--server takes one of ${SERVER_PROFILES.join(', ')}, not "${value.slice(0, 40)}"`);
      return value as ServerProfile | undefined;
    },
    port(env: NodeJS.ProcessEnv): number {
      const [variable, fallback] = PORTS[command] ?? ['PORT', '4010'];
      const value = (values.port as string | undefined) ?? env[variable] ?? fallback;
      if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw usageError(`invalid port "${value}"`);
      return Number(value);
    },
  };
}

/** A command's help: what it does, then its options, each wrapped under its name. */
export function usage(command: Command, synopsis: string, about: string): string {
  const indent = ' '.repeat(27);
  const options = Object.entries(OPTIONS)
    .filter(([, spec]) => spec.commands.includes(command))
    .map(([name, spec]) => {
      const head = `  ${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.arg ? ` ${spec.arg}` : ''}`;
      const [variable, port] = PORTS[command] ?? ['PORT', spec.fallback];
      const fallback = name === 'port' ? `$${variable} or ${port}` : spec.fallback;
      const help = `${spec.help}${fallback === undefined ? '' : ` (default ${fallback})`}`;
      const lines = head.length < 26 ? [head.padEnd(26)] : [head, indent.slice(1)];
      for (const word of help.split(' ')) {
        if (lines.at(-1)!.length + word.length > 98) lines.push(indent + word);
        else lines[lines.length - 1] += ` ${word}`;
      }
      return lines.join('\n');
    });
  return `Usage: ${synopsis}\n\n${about.trim()}\n\nOptions:\n${options.join('\n')}\n`;
}

export type Io = Record<'stdout' | 'stderr', (text: string) => void>;

/** The one logger of the commands: `<prefix>: ` before each line it says. */
export function logger(io: Io, prefix: string) {
  return {
    out: (line: string) => io.stdout(`${prefix}: ${line}\n`),
    plain: (line: string) => io.stdout(`${line}\n`),
    err: (line: string) => io.stderr(`${prefix}: ${line}\n`),
    /** `parse()`'s options, or for --help (undefined) and a usage error what is printed and the exit code. */
    async options<T>(usage: string, parse: () => T | undefined | Promise<T | undefined>): Promise<T | number> {
      try {
        const options = await parse();
        if (options === undefined) io.stdout(usage);
        return options ?? 0;
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        io.stderr(`${prefix}: ${error.message}\n\n${usage}`);
        return error.status;
      }
    },
  };
}
