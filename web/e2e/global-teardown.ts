import { request as playwrightRequest } from '@playwright/test';
import { GOING_UP, ON_HYPERVISOR, statusIn, type TAdminDesktopList } from '@vdi/contracts';
import config from '../playwright.config';
import { apiToken, scaled } from './support';

/**
 * After the last journey, before the server is stopped: every desktop still running is stopped.
 * The server keeps guests running over its own stop (a restarted server adopts them), so a guest a
 * journey left on (a retried attempt, a journey that ends on an open viewer) would outlive the run
 * with its network. Names what it stopped, so a journey that should clean up after itself shows.
 */
export default async function globalTeardown() {
  const request = await playwrightRequest.newContext({ baseURL: config.use?.baseURL });
  try {
    const headers = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
    const running = async () => {
      const res = await request.get('/api/v3/admin/desktops?per_page=500', { headers });
      if (!res.ok()) return [];
      const list = (await res.json()) as TAdminDesktopList;
      return list.items.filter((d) => statusIn(GOING_UP, d.status) || statusIn(ON_HYPERVISOR, d.status));
    };
    const left = await running();
    if (left.length === 0) return;
    process.stdout.write(`e2e teardown: stopping ${left.length} desktop(s) still running: ${left.map((d) => `${d.name} (${d.username}, ${d.status})`).join(', ')}\n`);
    const deadline = Date.now() + scaled(90_000);
    for (let now = left; now.length > 0 && Date.now() < deadline; now = await running()) {
      const queued = now.filter((d) => statusIn(GOING_UP, d.status)).map((d) => d.id);
      const up = now.filter((d) => !statusIn(GOING_UP, d.status)).map((d) => d.id);
      if (queued.length) await request.post('/api/v3/admin/desktops/stop', { headers, data: { ids: queued } });
      if (up.length) await request.post('/api/v3/admin/desktops/force_stop', { headers, data: { ids: up } });
      await new Promise((r) => setTimeout(r, 500));
    }
  } catch (err) {
    process.stdout.write(`e2e teardown: could not stop the desktops left running: ${String(err)}\n`);
  } finally {
    await request.dispose();
  }
}
