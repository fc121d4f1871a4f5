// The server behind client-speed.mjs, run as a child process so that its CPU time is not counted
// in the client's: any request gets the same small JSON answer over keep-alive. Prints its port.
import { createServer } from 'node:http';

const BODY = Buffer.from('{"id":11001,"title":"ci-runner","read_only":true,"key_id":11001}');
const HEADERS = {
  'content-type': 'application/json;charset=utf-8',
  'content-length': BODY.length,
  connection: 'keep-alive',
};

const server = createServer((req, res) => {
  req.resume(); // drain any body so the connection can be reused
  res.writeHead(200, HEADERS).end(BODY);
});
// Longer than a benchmark round, so idle sockets are not closed between clients.
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => process.exit(0));
// Stdin is a pipe from the benchmark: when the benchmark dies, it closes and the server goes too.
process.stdin.on('end', () => process.exit(0)).resume();
