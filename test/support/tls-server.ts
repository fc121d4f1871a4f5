// HTTPS servers on loopback with certificates made for the test: self-signed, expired, or for
// another host, as in-house Gitea servers often have. Keys and certificates are generated in each
// run (a committed private key would be one more secret lying in the repository).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { serveOnLoopback } from './loopback.js';

export type CertificateKind = 'self-signed' | 'expired' | 'for another host';

export interface TlsServer {
  /** `https://127.0.0.1:PORT`. */
  origin: string;
  /** A PEM file of the server's certificate, which is its own CA: what NODE_EXTRA_CA_CERTS takes. */
  caFile: string;
  /** The request paths the server was asked for. */
  paths: string[];
  close(): Promise<void>;
}

/** Validity of each kind, and the address it names: 127.0.0.1 for all but the one for another host. */
function certificateOptions(kind: CertificateKind): Parameters<typeof generate>[1] {
  const day = 24 * 3600 * 1000;
  const [notBeforeDate, notAfterDate] =
    kind === 'expired'
      ? [new Date(Date.now() - 60 * day), new Date(Date.now() - 30 * day)]
      : [new Date(Date.now() - day), new Date(Date.now() + 30 * day)];
  const altNames =
    kind === 'for another host'
      ? [{ type: 2 as const, value: 'gitea.example.org' }]
      : [{ type: 7 as const, ip: '127.0.0.1' }];
  return {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames },
    ],
  };
}

/** Starts an HTTPS server on 127.0.0.1 with a fresh certificate of `kind`, answering with `answer`. */
export async function startTlsServer(
  kind: CertificateKind,
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TlsServer> {
  const pems = await generate([{ name: 'commonName', value: 'gitea-contract test server' }], certificateOptions(kind));
  const folder = await mkdtemp(join(tmpdir(), 'gitea-contract-tls-'));
  const caFile = join(folder, 'ca.pem');
  await writeFile(caFile, pems.cert);
  const paths: string[] = [];
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    paths.push(req.url ?? '');
    answer(req, res);
  });
  const loopback = await serveOnLoopback(server, () => server.closeAllConnections());
  return {
    origin: `https://127.0.0.1:${loopback.port}`,
    caFile,
    paths,
    async close() {
      await loopback.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
