import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type APIRequestContext } from '@playwright/test';
import { apiToken, scaled } from './support';

// What the journeys on a real guest share (viewer-toolbar, viewer-files, viewer-vnc-clipboard): the guest's serial
// console, calls as the journey's own person, and the desktop stopped and deleted after them.

const dataDir = process.env.E2E_DATA_DIR ?? join(import.meta.dirname, '..', '..', '.tmp', 'e2e-data');

/** What the desktop's guest wrote on its serial console so far ('' before it starts). */
export const serial = (id: string) => {
  const file = join(dataDir, 'run', id, 'serial.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

/** The API as `person` (signed in through the API for each call). */
export const personApi = (person: string) => async (request: APIRequestContext, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown) =>
  request.fetch(`/api/v3${path}`, { method, data, headers: { authorization: `Bearer ${await apiToken(request, person)}` } });

/** Stops the desktop (a second stop forces it), waits until it is at rest or gone, and deletes it. */
export async function stopAndDelete(request: APIRequestContext, api: ReturnType<typeof personApi>, id: string) {
  for (let i = 0; i < 2; i++) await api(request, 'GET', `/desktop/stop/${id}`).catch(() => undefined);
  await expect
    .poll(async () => ((await (await api(request, 'GET', '/user/desktops')).json().catch(() => [])) as { id: string; state: string }[]).find((d) => d.id === id)?.state ?? 'gone', { timeout: scaled(60_000) })
    .toMatch(/Stopped|gone/);
  await api(request, 'DELETE', `/desktop/${id}`).catch(() => undefined);
}
