import { expect, test, type BrowserContext } from '@playwright/test';
import { personApi, stopAndDelete } from './guest-desktop';
import { apiToken, freshUser, litPixels, scaled, signInAs, userId } from './support';

// Desktop pools (issue 30): a class signs in at the same moment and each person opens a prepared desktop of the pool
// at one click, their own, with the guest's screen at once. E2E_CLASS_SIZE people (6 in the suite; 30 — a class —
// run by hand with E2E_VCPU_OVERCOMMIT=32, as 30 small guests on a 2-core machine need).

const SIZE = Number(process.env.E2E_CLASS_SIZE ?? 6);
const POOL = 'E2E classroom pool';

test('a class signs in at once and each person opens their own prepared desktop from the pool', async ({ browser, request }) => {
  test.setTimeout(scaled(240_000 + SIZE * 15_000));
  const people = Array.from({ length: SIZE }, (_, i) => `class-${String(i + 1).padStart(2, '0')}`);
  // One after the other: each of these signs the admin in, and a sign-in ends that person's earlier session.
  const ids: string[] = [];
  for (const p of people) {
    await freshUser(request, p);
    ids.push(await userId(request, p));
  }
  const admin = { authorization: `Bearer ${await apiToken(request, 'admin')}` };
  const templates = (await (await request.get('/api/v3/user/templates/allowed/all', { headers: admin })).json()) as { id: string; name: string }[];
  const template = templates.find((x) => x.name === 'Demo Linux') ?? templates[0]!;
  const old = ((await (await request.get('/api/v3/desktop-pools', { headers: admin })).json()) as { id: string; name: string }[]).find((x) => x.name === POOL);
  if (old) await request.delete(`/api/v3/desktop-pools/${old.id}`, { headers: admin });
  const made = await request.post('/api/v3/desktop-pools', {
    headers: admin,
    data: { name: POOL, template_id: template.id, allowed: { users: ids }, max_desktops: SIZE, prepared: SIZE, persistent: false },
  });
  expect(made.ok(), await made.text()).toBe(true);
  const pool = ((await made.json()) as { id: string }).id;
  const contexts: BrowserContext[] = [];
  try {
    await expect
      .poll(async () => ((await (await request.get(`/api/v3/desktop-pools/${pool}`, { headers: admin })).json()) as { counts: { prepared: number } }).counts.prepared, {
        timeout: scaled(120_000 + SIZE * 10_000),
        intervals: [1000],
      })
      .toBe(SIZE);
    for (let i = 0; i < SIZE; i++) contexts.push(await browser.newContext());
    // All at once: sign in, the pool's card says ready, one click, the viewer on the guest's screen.
    const opened = await Promise.all(
      people.map(async (person, i) => {
        const page = await contexts[i]!.newPage();
        // (what the page warns of, e.g. a screen's download tried again, is kept with the person's name)
        page.on('console', (m) => ['warning', 'error'].includes(m.type()) && console.log(`${person} [${m.type()}] ${m.text().slice(0, 300)}`));
        const t0 = Date.now();
        // (the whole class's browsers load the portal and sign in on this machine at once)
        await signInAs(page, person, { timeout: scaled(30_000 + SIZE * 3_000) });
        const signedIn = Date.now() - t0;
        const card = page.locator(`[data-testid=pool-card][data-name="${POOL}"]`);
        await expect(card).toHaveAttribute('data-state', 'ready', { timeout: scaled(60_000) });
        const [viewer] = await Promise.all([contexts[i]!.waitForEvent('page'), card.getByTestId('pool-take').click()]);
        await expect(viewer).toHaveURL(/\/viewer\/vnc/, { timeout: scaled(60_000) });
        await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', { timeout: scaled(60_000) });
        await expect.poll(() => litPixels(viewer.getByTestId('viewer-screen')), { timeout: scaled(60_000), intervals: [500] }).toBeGreaterThan(7000);
        console.log(`${person}: signed in after ${signedIn} ms, the guest's screen ${Date.now() - t0 - signedIn} ms later`);
        // Theirs: in their own list, and nobody else's.
        const mine = (await (await personApi(person)(request, 'GET', '/user/desktops')).json()) as { id: string; name: string }[];
        expect(mine.filter((d) => d.name === POOL)).toHaveLength(1);
        return mine.find((d) => d.name === POOL)!.id;
      }),
    );
    expect(new Set(opened).size).toBe(SIZE);
    const counts = ((await (await request.get(`/api/v3/desktop-pools/${pool}`, { headers: admin })).json()) as { counts: { in_use: number } }).counts;
    expect(counts.in_use).toBe(SIZE);
  } finally {
    for (const c of contexts) await c.close().catch(() => undefined);
    await request.delete(`/api/v3/desktop-pools/${pool}`, { headers: admin });
    for (const person of people) {
      const api = personApi(person);
      const theirs = (await (await api(request, 'GET', '/user/desktops')).json()) as { id: string }[];
      for (const d of theirs) await stopAndDelete(request, api, d.id);
    }
  }
});
