// Raw baseline of the live fan-out, run as its own process: a bare socket.io server on the
// portal's path and namespace; each socket names its user in the handshake and joins that
// user's room. POST /emit?bytes=n sends one event of n bytes to every user's room, one emit
// per user as the portal's event bus does (`users=n`: to rooms user:0…n-1, whether their sockets
// are here or on another process).
// RAW_ADAPTER=postgres|postgres-batched|redis with RAW_ADAPTER_URL: several of these share their rooms
// through socket.io's PostgreSQL adapter (as it comes, or with its NOTIFYs batched as the portal's
// socket/peers.ts sends them) or its Redis adapter.
import http from 'node:http';
import pg from 'pg';
import { createClient } from 'redis';
import { Server, type ServerOptions } from 'socket.io';
import { createAdapter as postgresAdapter } from '@socket.io/postgres-adapter';
import { createAdapter as redisAdapter } from '@socket.io/redis-adapter';
import { SOCKET_NAMESPACE, SOCKET_PATH } from '@vdi/contracts';
import { batchingNotifies } from '../src/socket/peers';

async function adapter(): Promise<ServerOptions['adapter'] | undefined> {
  const url = process.env.RAW_ADAPTER_URL;
  if (process.env.RAW_ADAPTER?.startsWith('postgres')) {
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    await pool.query(`CREATE TABLE IF NOT EXISTS socket_io_attachments (id bigserial PRIMARY KEY, created_at timestamptz DEFAULT now(), payload bytea)`).catch(() => undefined);
    return postgresAdapter(process.env.RAW_ADAPTER === 'postgres-batched' ? batchingNotifies(pool) : pool) as ServerOptions['adapter'];
  }
  if (process.env.RAW_ADAPTER === 'redis') {
    const pub = createClient({ url });
    const sub = pub.duplicate();
    await Promise.all([pub.connect(), sub.connect()]);
    return redisAdapter(pub, sub) as ServerOptions['adapter'];
  }
  return undefined;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'POST' && url.pathname === '/emit') {
    const payload = JSON.stringify({ pad: 'x'.repeat(Math.max(0, Number(url.searchParams.get('bytes') ?? 0) - 10)) });
    const n = url.searchParams.get('users');
    const rooms = n ? Array.from({ length: Number(n) }, (_, i) => String(i)) : users;
    for (const room of rooms) nsp.to(`user:${room}`).emit('desktop_add', payload);
    res.writeHead(200).end('{}');
  } else res.writeHead(404).end();
});
const shared = await adapter();
const io = new Server(server, { path: SOCKET_PATH, serveClient: false, ...(shared ? { adapter: shared } : {}) });
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
