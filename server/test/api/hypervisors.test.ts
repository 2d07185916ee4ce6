import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { ZAdminDesktopList, ZAdminHypervisor, ZAdminHypervisorDrained, ZAdminHypervisorMarkedDown, ZAdminHypervisorHostKey, ZAdminHypervisorList, ZDesktop, ZUserConfig } from '@vdi/contracts';
import { schema } from '../../src/db';
import { HostError, type HostDirectory, type HostStatus } from '../../src/engine/hosts';
import { call, startTestServer, type TestServer } from '../helpers/server';
import { demoTemplate, makeDesktop, tokenOf, userRow } from '../helpers/routes-fixtures';
import { createPlacement } from '../../src/modules/placement';

// Hypervisors in the console (issue 25): add by libvirt URI with the host key confirmed, drain,
// remove once empty. The local engine reaches no other host: a double directory stands in for
// the libvirt one for `host-a.test` (the unit here is the console's rules, not the connection).

const A = '/api/v3/admin';
const REMOTE = 'qemu+ssh://vdi@host-a.test/system';
const KEY = { algorithm: 'ssh-ed25519', fingerprint: 'SHA256:Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy' };

let server: TestServer;
const tok = {} as Record<'admin' | 'manager' | 'user', string>;
let local: HostDirectory;
const connected = new Set<string>();
/** connected hosts that do not answer now */
const offline = new Set<string>();

const remoteStatus = (): HostStatus => ({
  online: true, cpuModel: 'Test CPU', cpus: 8, memoryMb: 32768, freeMemoryMb: 30000, running: 0, startsInFlight: 0,
  pools: [{ name: 'default', path: '/var/lib/vdi/storage', capacityBytes: 1e12, freeBytes: 5e11 }], guestNetwork: false, lastError: null, checkedAt: new Date().toISOString(),
});

beforeAll(async () => {
  server = await startTestServer();
  for (const c of ['admin', 'manager', 'user'] as const) tok[c] = await tokenOf(server, c, 'default');
  local = server.ctx.engine.hosts;
  server.ctx.engine.hosts = {
    status: async (id) => (connected.has(id) ? { ...remoteStatus(), ...(offline.has(id) && { online: false, lastError: 'connection to the hypervisor lost' }) } : local.status(id)),
    hostKey: async (uri) => {
      if (uri === REMOTE) return KEY;
      throw new HostError('unreachable', 'ssh: connect to host: Connection refused');
    },
    connect: async (id) => {
      connected.add(id);
      return remoteStatus();
    },
    disconnect: async (id) => void connected.delete(id),
    installationPublicKey: async () => 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKey vdi@installation',
  };
}, scaled(120_000));
afterAll(async () => {
  if (server && local) server.ctx.engine.hosts = local;
  await server?.close();
});

const json = async (path: string, token: string, opts: { method?: string; body?: unknown } = {}) => {
  const r = await call(server, `${A}${path}`, { token, ...opts });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const stored = () => server.ctx.db.select().from(schema.hypervisors);

describe('hypervisors', () => {
  it('managers and users get 403, before their input is looked at', async () => {
    for (const c of ['manager', 'user'] as const) {
      expect((await json('/hypervisors', tok[c], { method: 'POST', body: { uri: 42 } })).status).toBe(403);
      expect((await json('/hypervisors/ssh-key', tok[c])).status).toBe(403);
      expect((await json('/hypervisors/local/drain', tok[c], { method: 'PUT', body: {} })).status).toBe(403);
      expect((await json('/hypervisors/local', tok[c], { method: 'DELETE' })).status).toBe(403);
    }
  });

  it('a URI that is not a libvirt qemu+ssh or qemu+tls one is a 400 hypervisor_uri_invalid; a bad body a 400 validation_error', async () => {
    for (const uri of ['host-a', 'qemu:///system', 'http://host/system', 'qemu+ssh://u:secret@host/system', 'qemu+ssh://host/session', 'qemu+ssh://host/system?keyfile=/etc/x', 'qemu+tls://user@host/system', 'qemu+ssh://bad_host!/system']) {
      const r = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri } });
      expect(r.status, uri).toBe(400);
      expect(r.body.description_code, uri).toBe('hypervisor_uri_invalid');
      // The refusal never repeats the URI (it may hold a password).
      expect(JSON.stringify(r.body)).not.toContain('secret');
    }
    for (const body of [{}, { uri: '' }, { uri: REMOTE, extra: 1 }, { uri: 'x'.repeat(600) }]) {
      const r = await json('/hypervisors', tok.admin, { method: 'POST', body });
      expect(r.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(r.body.description_code).toBe('validation_error');
    }
    expect((await json('/hypervisors/local/drain', tok.admin, { method: 'PUT', body: { draining: 'yes' } })).status).toBe(400);
    expect(await stored()).toHaveLength(1);
  });

  it('a host that cannot be reached is a 428 hypervisor_unreachable, and nothing is stored', async () => {
    const r = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: 'qemu+ssh://vdi@192.0.2.1/system' } });
    expect(r.status).toBe(428);
    expect(r.body.description_code).toBe('hypervisor_unreachable');
    expect(JSON.stringify(r.body)).not.toContain('192.0.2.1');
    expect(await stored()).toHaveLength(1);
  });

  it('shows the installation key to copy', async () => {
    const r = await json('/hypervisors/ssh-key', tok.admin);
    expect(r).toEqual({ status: 200, body: { public_key: expect.stringMatching(/^ssh-ed25519 /) } });
  });

  it('add → the host key to confirm → a wrong key refused → confirmed → listed live → drain → not removable while a desktop runs → removed', async () => {
    // First call: the key, nothing stored; the URI comes back normalised.
    const first = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: ' QEMU+SSH://vdi@HOST-A.test:22/system ' } });
    expect(first.status).toBe(200);
    expect(ZAdminHypervisorHostKey.parse(first.body)).toEqual({ uri: REMOTE, ...KEY });
    expect(await stored()).toHaveLength(1);

    const wrong = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: REMOTE, host_key_fingerprint: 'SHA256:other' } });
    expect(wrong.status).toBe(409);
    expect(wrong.body.description_code).toBe('hypervisor_host_key_changed');
    expect(await stored()).toHaveLength(1);
    expect(connected.size).toBe(0);

    const added = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: REMOTE, name: 'Host A', host_key_fingerprint: KEY.fingerprint } });
    expect(added.status).toBe(201);
    const host = ZAdminHypervisor.parse(added.body);
    expect(host).toMatchObject({ name: 'Host A', uri: REMOTE, state: 'Online', draining: false, accepts_starts: true, cpu_model: 'Test CPU', memory_free_mb: 30000 });
    expect(host.pools).toEqual([{ name: 'default', path: '/var/lib/vdi/storage', capacity_bytes: 1e12, free_bytes: 5e11 }]);
    const [row] = await server.ctx.db.select().from(schema.hypervisors).where(eq(schema.hypervisors.id, host.id));
    expect(row).toMatchObject({ uri: REMOTE, hostKeyFingerprint: KEY.fingerprint });

    const again = await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: 'qemu+ssh://vdi@host-a.test/system' } });
    expect(again.status).toBe(409);
    expect(again.body.description_code).toBe('hypervisor_exists');

    const list = ZAdminHypervisorList.parse((await json('/hypervisors', tok.admin)).body);
    expect(list.items.map((h) => h.id).sort()).toEqual([host.id, 'local'].sort());
    expect(list.items.find((h) => h.id === 'local')).toMatchObject({ uri: null, state: 'Online', last_error: null, off_by_configuration: false });
    // This machine's host is watched by the process running its QEMU (the others' watchers: processes/host-watch.test.ts).
    expect(list.items.find((h) => h.id === 'local')!.watched_by).toBe(server.config.serverId);
    expect(list.items.find((h) => h.id === 'local')!.pools[0]!.free_bytes).toBeGreaterThan(0);

    // A desktop runs there: drain answers it (for the console's bulk shutdown), removal is refused.
    const desktop = await makeDesktop(server, await userRow(server, 'user'), { status: 'Started' });
    await server.ctx.db.update(schema.domains).set({ hypervisorId: host.id }).where(eq(schema.domains.id, desktop.id));
    try {
      const drained = await json(`/hypervisors/${host.id}/drain`, tok.admin, { method: 'PUT', body: { draining: true } });
      expect(drained.status).toBe(200);
      const d = ZAdminHypervisorDrained.parse(drained.body);
      expect(d.hypervisor).toMatchObject({ draining: true, accepts_starts: false });
      expect(d.running_desktop_ids).toEqual([desktop.id]);

      const busy = await json(`/hypervisors/${host.id}`, tok.admin, { method: 'DELETE' });
      expect(busy.status).toBe(409);
      expect(busy.body).toMatchObject({ description_code: 'hypervisor_not_empty', params: { running: 1 } });
      expect(await stored()).toHaveLength(2);

      await server.ctx.db.update(schema.domains).set({ status: 'Stopped', hypervisorId: null }).where(eq(schema.domains.id, desktop.id));
      const removed = await call(server, `${A}/hypervisors/${host.id}`, { token: tok.admin, method: 'DELETE' });
      expect(removed.status).toBe(204);
      expect(await stored()).toHaveLength(1);
      expect(connected.has(host.id)).toBe(false);
      const actions = (await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.objectId, host.id))).map((e) => e.action);
      expect(actions).toEqual(expect.arrayContaining(['hypervisor.add', 'hypervisor.drain', 'hypervisor.remove']));
    } finally {
      await server.ctx.db.delete(schema.domains).where(eq(schema.domains.id, desktop.id)).catch(() => undefined);
    }
  });

  it('an offline host marked down: its Unknown desktops stopped to start elsewhere; refused while it answers, for the local host and for others than admins', async () => {
    const added = ZAdminHypervisor.parse(
      (await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: REMOTE, name: 'Host B', host_key_fingerprint: KEY.fingerprint } })).body,
    );
    const owner = await userRow(server, 'user');
    const desktop = await makeDesktop(server, owner, { status: 'Unknown' });
    const temporary = await makeDesktop(server, owner, { status: 'Unknown', persistent: false });
    const elsewhere = await makeDesktop(server, owner, { status: 'Started' });
    await server.ctx.db.update(schema.domains).set({ hypervisorId: added.id }).where(inArray(schema.domains.id, [desktop.id, temporary.id]));
    try {
      expect((await json(`/hypervisors/${added.id}/down`, tok.manager, { method: 'POST' })).status).toBe(403);
      const answering = await json(`/hypervisors/${added.id}/down`, tok.admin, { method: 'POST' });
      expect(answering).toMatchObject({ status: 409, body: { description_code: 'hypervisor_online' } });
      expect((await json('/hypervisors/local/down', tok.admin, { method: 'POST' })).status).toBe(400);
      expect((await json('/hypervisors/nope/down', tok.admin, { method: 'POST' })).status).toBe(404);

      offline.add(added.id);
      const listed = ZAdminHypervisorList.parse((await json('/hypervisors', tok.admin)).body).items.find((h) => h.id === added.id);
      expect(listed).toMatchObject({ state: 'Offline', desktops_unknown: 2 });
      // Not removable while its desktops are unknown: marked down first.
      expect((await json(`/hypervisors/${added.id}`, tok.admin, { method: 'DELETE' })).body).toMatchObject({ description_code: 'hypervisor_not_empty' });

      const down = await json(`/hypervisors/${added.id}/down`, tok.admin, { method: 'POST' });
      expect(down.status).toBe(200);
      const answer = ZAdminHypervisorMarkedDown.parse(down.body);
      expect(answer.released_desktop_ids.sort()).toEqual([desktop.id, temporary.id].sort());
      expect(answer.hypervisor).toMatchObject({ state: 'Offline', desktops_unknown: 0 });
      const rows = await server.ctx.db.select().from(schema.domains).where(inArray(schema.domains.id, [desktop.id, temporary.id, elsewhere.id]));
      expect(rows.find((r) => r.id === desktop.id)).toMatchObject({ status: 'Stopped', hypervisorId: null });
      expect(rows.find((r) => r.id === temporary.id)).toBeUndefined();
      expect(rows.find((r) => r.id === elsewhere.id)).toMatchObject({ status: 'Started' });
      const actions = (await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.objectId, added.id))).map((e) => e.action);
      expect(actions).toContain('hypervisor.down');
      expect((await call(server, `${A}/hypervisors/${added.id}`, { token: tok.admin, method: 'DELETE' })).status).toBe(204);
    } finally {
      offline.delete(added.id);
      await server.ctx.db.delete(schema.domains).where(inArray(schema.domains.id, [desktop.id, temporary.id, elsewhere.id])).catch(() => undefined);
    }
  });

  it('a GPU card is in one hypervisor: its profiles are offered there only, and the host is not removed while it holds the card', async () => {
    const added = ZAdminHypervisor.parse(
      (await json('/hypervisors', tok.admin, { method: 'POST', body: { uri: REMOTE, name: 'Host G', host_key_fingerprint: KEY.fingerprint } })).body,
    );
    const owner = await userRow(server, 'user');
    const desktop = await makeDesktop(server, owner);
    const cardIds: string[] = [];
    try {
      expect((await json('/reservables/gpus', tok.admin, { method: 'POST', body: { name: 'Nowhere', hypervisor_id: 'nope' } })).status).toBe(400);
      const made = await json('/reservables/gpus', tok.admin, { method: 'POST', body: { name: 'Remote A16', brand: 'NVIDIA', model: 'A16', hypervisor_id: added.id } });
      expect(made.body).toMatchObject({ hypervisor_id: added.id });
      cardIds.push(made.body.id);
      const withProfile = await json(`/reservables/gpus/${made.body.id}/subitems`, tok.admin, { method: 'POST', body: { profile: 'H2Q', name: 'Host G 2Q', units: 4 } });
      expect(withProfile.status).toBe(200);
      const profile = withProfile.body.subitems[0].id as string;
      const now = server.ctx.clock.now();
      await server.ctx.db.insert(schema.reservablePlans).values({
        id: `plan-${profile}`, itemId: made.body.id, subitemId: profile, start: new Date(now.getTime() - 3_600_000), end: new Date(now.getTime() + 3_600_000), units: 4, userId: owner.id,
      });
      const [row] = await server.ctx.db
        .update(schema.domains)
        .set({ hardware: { ...desktop.hardware, reservables: { vgpus: [profile] } } })
        .where(eq(schema.domains.id, desktop.id))
        .returning();
      const placement = createPlacement(server.ctx);
      expect(await placement.hostFor(row!, { guestNetwork: false })).toBe(added.id);
      placement.forget(added.id);
      // The card moved to this server's host: offered here, not there.
      expect((await json(`/reservables/gpus/${made.body.id}`, tok.admin, { method: 'PUT', body: { hypervisor_id: 'local' } })).body).toMatchObject({ hypervisor_id: 'local' });
      expect(await placement.hostFor(row!, { guestNetwork: false })).toBe('local');
      placement.forget('local');
      await json(`/reservables/gpus/${made.body.id}`, tok.admin, { method: 'PUT', body: { hypervisor_id: added.id } });
      const busy = await json(`/hypervisors/${added.id}`, tok.admin, { method: 'DELETE' });
      expect(busy).toMatchObject({ status: 409, body: { description_code: 'hypervisor_has_gpus', params: { gpus: 1 } } });
    } finally {
      for (const c of cardIds) await server.ctx.db.delete(schema.reservableItems).where(eq(schema.reservableItems.id, c));
      await server.ctx.db.delete(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, 'NVIDIA-A16-H2Q')).catch(() => undefined);
      await server.ctx.db.delete(schema.domains).where(eq(schema.domains.id, desktop.id));
      await call(server, `${A}/hypervisors/${added.id}`, { token: tok.admin, method: 'DELETE' });
    }
  });

  it('the local host: never removed; drained, it refuses starts with the original code and the reason', async () => {
    const r = await json('/hypervisors/local', tok.admin, { method: 'DELETE' });
    expect(r.status).toBe(400);
    expect((await json('/hypervisors/nope', tok.admin, { method: 'DELETE' })).status).toBe(404);
    expect((await json('/hypervisors/nope/drain', tok.admin, { method: 'PUT', body: { draining: true } })).status).toBe(404);

    const desktop = await makeDesktop(server, await userRow(server, 'user'));
    const drained = await json('/hypervisors/local/drain', tok.admin, { method: 'PUT', body: { draining: true } });
    expect(drained.body.hypervisor).toMatchObject({ id: 'local', draining: true, accepts_starts: false });
    try {
      const refused = await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user });
      expect(refused.status).toBe(428);
      expect(await refused.json()).toMatchObject({ description_code: 'hypervisors_not_available', params: { reason: 'no_new_starts' } });
      const [still] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id));
      expect(still).toMatchObject({ status: 'Stopped', hypervisorId: null });
    } finally {
      await json('/hypervisors/local/drain', tok.admin, { method: 'PUT', body: { draining: false } });
    }
  });

  it("a category mapped to a pool no host declares: its desktops' starts are refused with the reason pool_unreachable, nothing changed", async () => {
    const desktop = await makeDesktop(server, await userRow(server, 'user'));
    const [before] = await server.ctx.db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, desktop.id));
    expect((await json('/categories/default', tok.admin, { method: 'PUT', body: { storage_pool: 'fast' } })).status).toBe(200);
    try {
      const refused = await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user });
      expect(refused.status).toBe(428);
      expect(await refused.json()).toMatchObject({ description_code: 'hypervisors_not_available', params: { reason: 'pool_unreachable' } });
      const [still] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktop.id));
      expect(still).toMatchObject({ status: 'Stopped', hypervisorId: null });
      const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, before!.storageId));
      expect(disk).toMatchObject({ hypervisorId: null });
    } finally {
      await json('/categories/default', tok.admin, { method: 'PUT', body: { storage_pool: null } });
    }
  });

  it('preferred hypervisors: ids must exist; a template forced onto a host that is offline refuses starts with the reason', async () => {
    const template = await demoTemplate(server);
    const path = `/hypervisors/preferred/template/${template.id}`;
    const unknown = await json(path, tok.admin, { method: 'PUT', body: { forced_hyp: ['nope'], favourite_hyp: [] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.params).toEqual({ unknown: ['nope'] });
    expect((await json('/hypervisors/preferred/template/nope', tok.admin, { method: 'PUT', body: { forced_hyp: [], favourite_hyp: [] } })).status).toBe(404);
    expect((await json(path, tok.manager, { method: 'PUT', body: { forced_hyp: [], favourite_hyp: [] } })).status).toBe(403);

    await server.ctx.db.insert(schema.hypervisors).values({ id: 'ghost', name: 'Ghost', uri: 'qemu+ssh://vdi@ghost.test/system' });
    const desktop = await makeDesktop(server, await userRow(server, 'user'));
    try {
      const set = await json(path, tok.admin, { method: 'PUT', body: { forced_hyp: ['ghost', 'ghost'], favourite_hyp: [] } });
      expect(set).toEqual({ status: 200, body: { forced_hyp: ['ghost'], favourite_hyp: [] } });
      expect(await json(path, tok.admin)).toEqual({ status: 200, body: { forced_hyp: ['ghost'], favourite_hyp: [] } });
      const refused = await call(server, `/api/v3/desktop/start/${desktop.id}`, { token: tok.user });
      expect(refused.status).toBe(428);
      expect(await refused.json()).toMatchObject({ description_code: 'hypervisors_not_available', params: { reason: 'no_hypervisor_available' } });
    } finally {
      await json(path, tok.admin, { method: 'PUT', body: { forced_hyp: [], favourite_hyp: [] } });
      await server.ctx.db.delete(schema.hypervisors).where(eq(schema.hypervisors.id, 'ghost'));
    }
  });

  it('reading a template or deployment\'s preferred hypervisors: admins only (403 before the input), 400 on a bad kind, 404 on an unknown id', async () => {
    const template = await demoTemplate(server);
    expect(await json(`/hypervisors/preferred/template/${template.id}`, tok.admin)).toEqual({ status: 200, body: { forced_hyp: [], favourite_hyp: [] } });
    for (const c of ['manager', 'user'] as const) expect((await json('/hypervisors/preferred/nonsense/x', tok[c])).status).toBe(403);
    const bad = await json('/hypervisors/preferred/nonsense/x', tok.admin);
    expect(bad.status).toBe(400);
    expect(bad.body.description_code).toBe('validation_error');
    const gone = await json('/hypervisors/preferred/template/nope', tok.admin);
    expect(gone).toMatchObject({ status: 404, body: { description_code: 'template_not_found' } });
    expect(await json('/hypervisors/preferred/deployment/nope', tok.admin)).toMatchObject({ status: 404, body: { description_code: 'deployment_not_found' } });
    // A desktop is no template.
    const desktop = await makeDesktop(server, await userRow(server, 'user'));
    expect((await json(`/hypervisors/preferred/template/${desktop.id}`, tok.admin)).status).toBe(404);
  });

  it('the portal and the console show the name of the host a desktop runs on (never its address), nothing at rest; the portal hears that there are many hosts', async () => {
    const config = async () => ZUserConfig.parse(await (await call(server, '/api/v3/user/config', { token: tok.user })).json());
    expect((await config()).multiple_hypervisors).toBe(false);
    await server.ctx.db.insert(schema.hypervisors).values({ id: 'east', name: 'East wing', uri: 'qemu+ssh://vdi@east.test/system' });
    const owner = await userRow(server, 'user');
    const running = await makeDesktop(server, owner, { status: 'Started' });
    const resting = await makeDesktop(server, owner);
    const local = await makeDesktop(server, owner, { status: 'Started' });
    await server.ctx.db.update(schema.domains).set({ hypervisorId: 'east' }).where(eq(schema.domains.id, running.id));
    try {
      expect((await config()).multiple_hypervisors).toBe(true);
      const mine = z.array(ZDesktop).parse(await (await call(server, '/api/v3/user/desktops', { token: tok.user })).json());
      const of = (id: string) => mine.find((d) => d.id === id)!.hypervisor;
      expect([of(running.id), of(resting.id), of(local.id)]).toEqual(['East wing', null, 'This server']);
      expect(JSON.stringify(mine)).not.toContain('east.test');

      const admin = async (q: string) => ZAdminDesktopList.parse((await json(`/desktops?owner=${owner.id}&${q}`, tok.admin)).body);
      const all = await admin('per_page=100');
      expect(all.items.find((d) => d.id === running.id)!.hypervisor).toBe('East wing');
      expect(all.items.find((d) => d.id === resting.id)!.hypervisor).toBeNull();
      expect((await admin('hypervisor=east')).items.map((d) => d.id)).toEqual([running.id]);
      expect((await admin('hypervisor=local')).items.map((d) => d.id)).toEqual([local.id]);
    } finally {
      await server.ctx.db.delete(schema.domains).where(inArray(schema.domains.id, [running.id, resting.id, local.id])).catch(() => undefined);
      await server.ctx.db.delete(schema.hypervisors).where(eq(schema.hypervisors.id, 'east'));
    }
  });
});
