// Raw baseline of the live fan-out, run as its own process: a bare socket.io server on the
// portal's path and namespace; each socket names its user in the handshake and joins that
// user's room. POST /emit?bytes=n sends one event of n bytes to every user's room, one emit
// per user as the portal's event bus does.
import http from 'node:http';
import { Server } from 'socket.io';
import { SOCKET_NAMESPACE, SOCKET_PATH } from '@vdi/contracts';

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'POST' && url.pathname === '/emit') {
    const payload = JSON.stringify({ pad: 'x'.repeat(Math.max(0, Number(url.searchParams.get('bytes') ?? 0) - 10)) });
    for (const room of users) nsp.to(`user:${room}`).emit('desktop_add', payload);
    res.writeHead(200).end('{}');
  } else res.writeHead(404).end();
});
const io = new Server(server, { path: SOCKET_PATH, serveClient: false });
const nsp = io.of(SOCKET_NAMESPACE);
const users = new Set<string>();
nsp.on('connection', (socket) => {
  const user = String((socket.handshake.auth as { user?: unknown }).user ?? socket.id);
  users.add(user);
  void socket.join(`user:${user}`);
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`PORT ${typeof a === 'object' && a ? a.port : 0}\n`);
});
process.on('SIGTERM', () => {
  void io.close();
  process.exit(0);
});
