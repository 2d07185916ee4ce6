import type { Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import { ADMIN_SOCKET_NAMESPACE, SOCKET_NAMESPACE, SOCKET_PATH, SOCKET_REJECTED } from '@vdi/contracts';
import { eq } from 'drizzle-orm';
import { schema } from '../db';
import { adminCategoryRoom, adminSocketCount, ADMINS_ROOM } from './admins';
import type { AppContext } from '../context';
import { desktopRoom, userRoom } from './bus';

const sessionRoom = (sessionId: string) => `session:${sessionId}`;

/**
 * The live socket: namespace /userspace, authenticated with the session token in the
 * handshake's auth payload ({jwt}); each socket joins its user's room. Payloads travel
 * as JSON strings, as the original system sends them.
 */
export function attachSocketServer(httpServer: HttpServer, ctx: AppContext): Server {
  // destroyUpgrade off: other websockets (the VNC viewer) share this HTTP server. On PostgreSQL the
  // rooms are shared by every server process (socket/peers.ts): an emit to a room, and a disconnection
  // of a session's sockets, reach the sockets wherever they are connected.
  const adapter = ctx.peers.socketAdapter;
  const io = new Server(httpServer, { path: SOCKET_PATH, serveClient: false, destroyUpgrade: false, ...(adapter ? { adapter } : {}) });
  const nsp = io.of(SOCKET_NAMESPACE);

  nsp.use(async (socket, next) => {
    const auth = socket.handshake.auth as { jwt?: unknown; token?: unknown } | undefined;
    const token = typeof auth?.jwt === 'string' ? auth.jwt : typeof auth?.token === 'string' ? auth.token : undefined;
    try {
      if (!token) throw new Error('no token');
      const claims = await ctx.tokens.verify(token);
      if (claims.type === 'viewer' && claims.desktop_id) {
        // A direct-viewer page: the room of its one desktop, nothing else.
        socket.data.rooms = [desktopRoom(claims.desktop_id)];
        return next();
      }
      const session = await ctx.sessions.require(claims);
      socket.data.rooms = [userRoom(session.userId), sessionRoom(session.id)];
      next();
    } catch {
      next(new Error(SOCKET_REJECTED));
    }
  });

  nsp.on('connection', (socket) => {
    void socket.join(socket.data.rooms as string[]);
  });

  // The administration console: admins in one room, managers in their category's; nobody else.
  const adminNsp = io.of(ADMIN_SOCKET_NAMESPACE);
  adminNsp.use(async (socket, next) => {
    const auth = socket.handshake.auth as { jwt?: unknown; token?: unknown } | undefined;
    const token = typeof auth?.jwt === 'string' ? auth.jwt : typeof auth?.token === 'string' ? auth.token : undefined;
    try {
      if (!token) throw new Error('no token');
      const session = await ctx.sessions.require(await ctx.tokens.verify(token));
      const [user] = await ctx.db.select().from(schema.users).where(eq(schema.users.id, session.userId));
      if (!user?.active) throw new Error('inactive');
      if (user.roleId === 'admin') socket.data.rooms = [ADMINS_ROOM, sessionRoom(session.id)];
      else if (user.roleId === 'manager') socket.data.rooms = [adminCategoryRoom(user.categoryId), sessionRoom(session.id)];
      else throw new Error('not an administrator');
      next();
    } catch {
      next(new Error(SOCKET_REJECTED));
    }
  });
  adminNsp.on('connection', (socket) => {
    void socket.join(socket.data.rooms as string[]);
    if ((socket.data.rooms as string[]).includes(ADMINS_ROOM)) {
      adminSocketCount(ctx, 1);
      socket.once('disconnect', () => adminSocketCount(ctx, -1));
    }
  });

  const unsubscribe = ctx.bus.subscribe(({ room, event, payload, admin }) => {
    const namespace = admin ? adminNsp : nsp;
    // Nobody in the room (its people are not online): nothing to serialise and encode. Only when the
    // rooms are this process's own: with a shared adapter, the room's sockets may be on another process.
    let to = room;
    if (!adapter) {
      to = (typeof room === 'string' ? [room] : room).filter((r) => namespace.adapter.rooms.get(r)?.size);
      if (!to.length) return;
    }
    namespace.to(to).emit(event, JSON.stringify(payload));
  });
  // A session that ends (logout, a sign-in elsewhere, a disabled user) loses its sockets at once, on
  // every process (the adapter sends the emit and the disconnection in this order, on one connection).
  const unlisten = ctx.sessions.onEnded((ids) => {
    for (const id of ids) {
      nsp.to(sessionRoom(id)).emit('logout', JSON.stringify({ reason: 'session_ended' }));
      nsp.in(sessionRoom(id)).disconnectSockets(true);
      adminNsp.in(sessionRoom(id)).disconnectSockets(true);
    }
  });
  io.on('close', () => {
    unsubscribe();
    unlisten();
  });
  return io;
}
