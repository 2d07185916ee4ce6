import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ZVpnConfig } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { authOf, requireAuth } from '../../http/guard';
import { requirePublicUrl } from '../../http/base-url';
import { auditActorOf, audit } from '../../audit/record';
import type { VpnService } from '../../vpn/service';

/** The user's WireGuard file and its reset (seed 001: profile and navbar "VPN"). */
export async function vpnRoutes(app: FastifyInstance, ctx: AppContext, vpn: VpnService) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = requireAuth(ctx);

  // The file is kept: its endpoint is VPN_HOST, else the configured public address's host (never the request's Host).
  r.get('/user/vpn/config', { preHandler: auth, schema: { response: { 200: ZVpnConfig } } }, async (request) =>
    vpn.configFile(authOf(request).user.id, async () => ctx.config.vpn.host ?? new URL(await requirePublicUrl(ctx)).hostname),
  );

  r.put('/user/reset-vpn', { preHandler: auth }, async (request) => {
    const { user } = authOf(request);
    await vpn.reset(user.id);
    await audit(ctx.db, auditActorOf(request), { action: 'vpn.reset', objectType: 'user', objectId: user.id, objectName: user.username, categoryId: user.categoryId });
    return {};
  });
}
