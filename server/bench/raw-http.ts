// Raw baseline of the HTTP rows, run as its own process: a bare node:http server answering
// GET /bytes/<n> with a JSON body of n bytes (the same size as the portal's answer) and
// GET /static with a tiny HTML page (the baseline of the web row's time to interactive).
import http from 'node:http';

const bodies = new Map<number, Buffer>();
const bodyOf = (n: number) => {
  let b = bodies.get(n);
  if (!b) {
    // A JSON string of exactly n bytes: "xxx…".
    b = Buffer.from(JSON.stringify('x'.repeat(Math.max(0, n - 2))));
    bodies.set(n, b);
  }
  return b;
};
const page = Buffer.from('<!doctype html><html><head><meta charset="utf-8"><title>static</title></head><body><input data-testid="static-input"></body></html>');

const server = http.createServer((req, res) => {
  const m = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
  if (m) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(bodyOf(Math.min(Number(m[1]), 50_000_000)));
  } else if (req.url === '/static') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  } else {
    res.writeHead(404).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`PORT ${typeof a === 'object' && a ? a.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
