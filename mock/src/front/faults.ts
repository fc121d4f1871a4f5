// What a fault sends: `reset` nothing (the connection goes); 503 Gitea's maintenance page
// (routers/common/maintenancemode.go, renderServiceUnavailable) with `Retry-After: 1`; 502 and 504
// nginx's default pages (`server_tokens off`, CRLF). None is in the API's JSON dialect.
import { exposing } from './cors.js';
import type { Fault } from './prefer.js';

export interface FaultAnswer {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
}

/** nginx's default error page for `status`. */
function nginxPage(status: number, reason: string): FaultAnswer {
  const title = `${status} ${reason}`;
  const body = [
    '<html>',
    `<head><title>${title}</title></head>`,
    '<body>',
    `<center><h1>${title}</h1></center>`,
    '<hr><center>nginx</center>',
    '</body>',
    '</html>',
    '',
  ].join('\r\n');
  return { status, statusText: reason, headers: { Server: 'nginx', 'Content-Type': 'text/html' }, body };
}

const ANSWERS: Record<Exclude<Fault, 'reset'>, FaultAnswer> = {
  502: nginxPage(502, 'Bad Gateway'),
  503: {
    status: 503,
    statusText: 'Service Unavailable',
    headers: {
      // Go sniffs the type of a body written without one.
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'max-age=0, private, must-revalidate, no-transform',
      'X-Content-Type-Options': 'nosniff',
      'Retry-After': '1',
    },
    body: 'Service Unavailable',
  },
  504: nginxPage(504, 'Gateway Time-out'),
};

/**
 * The answer of a fault that sends one, with `cors`: a browser page can read it (a real proxy's
 * page carries CORS headers only when configured to), `Retry-After` included.
 */
export function faultAnswer(fault: Exclude<Fault, 'reset'>, cors: Record<string, string>): FaultAnswer {
  const answer = ANSWERS[fault];
  const headers = answer.headers['Retry-After'] === undefined ? cors : exposing(cors, 'Retry-After');
  return { ...answer, headers: { ...headers, ...answer.headers } };
}
