// npm run bench: the portal's own cost over the raw tools, measured in the same run.
// Never part of the tests; prints ratios (portal / raw), lower is better, 1.0 = no overhead.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { schema } from '../src/db';
import { createDesktopFromTemplate } from '../src/modules/desktops/create';
import { decideAccel } from '../src/engine/accel';
import { startTestServer, loginToken, call } from '../test/helpers/server';
import { firstFrameOverUnix, firstFrameOverWebSocket } from './rfb';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const row = (name: string, product: number, raw: number) =>
  console.log(`${name.padEnd(42)} portal ${product.toFixed(1).padStart(8)} ms   raw ${raw.toFixed(1).padStart(8)} ms   ratio ${(product / raw).toFixed(2)}`);

const server = await startTestServer({ startConcurrency: 1 });
const work = mkdtempSync(join(tmpdir(), 'vb-'));
try {
  const db = server.ctx.db;
  const [template] = await db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  const [base] = await db.select().from(schema.storage).where(eq(schema.storage.kind, 'template'));
  const [owner] = await db.select().from(schema.users).where(eq(schema.users.username, 'manager'));

  // 1. A desktop from a template: record + overlay disk, against a bare `qemu-img create`.
  const N = 20;
  const portal: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < N; i++) {
    let t0 = process.hrtime.bigint();
    await createDesktopFromTemplate(db, server.ctx.engine, template!, owner!, { name: `bench ${i}`, persistent: true, status: 'Stopped' });
    portal.push(ms(t0));
    t0 = process.hrtime.bigint();
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-o', 'cluster_size=4k,extended_l2=off', '-b', base!.path, '-F', 'qcow2', join(work, `raw-${i}.qcow2`)]);
    raw.push(ms(t0));
  }
  console.log(`\nBenchmarks (${N} runs each, medians; accel ${decideAccel('auto').accel})\n`);
  row('create desktop from template', median(portal), median(raw));

  // 2. A deployment of 50 desktops for a group of 50 students: the API call, the persisted job
  //    and its live events until the end, against 50 bare `qemu-img create` one after another.
  const D = 50;
  const [student] = await db.select().from(schema.users).where(eq(schema.users.username, 'student01'));
  await db.insert(schema.groups).values({ id: 'bench-group', uid: 'bench', name: 'Bench group', description: '', categoryId: student!.categoryId });
  await db.insert(schema.users).values(
    Array.from({ length: D }, (_, i) => ({ ...student!, id: `bench-${i}`, uid: `bench-${i}`, username: `bench${i}`, name: `Bench ${i}`, email: '', groupId: 'bench-group', quota: null })),
  );
  const adminToken = await loginToken(server, 'admin');
  await db.update(schema.users).set({ quota: null }).where(eq(schema.users.username, 'admin'));
  let t0 = process.hrtime.bigint();
  const created = await call(server, '/api/v3/deployments', {
    token: adminToken,
    body: { name: 'Bench deployment', template_id: template!.id, desktop_name: 'Bench desktop', allowed: { groups: ['bench-group'] } },
  });
  const { id: deploymentId } = (await created.json()) as { id: string };
  for (;;) {
    const [job] = await db.select().from(schema.jobs).where(eq(schema.jobs.targetId, deploymentId));
    if (job && job.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const deploymentMs = ms(t0);
  const made = await db.select().from(schema.domains).where(eq(schema.domains.tag, deploymentId));
  if (made.length !== D) throw new Error(`the deployment made ${made.length} desktops, not ${D}`);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < D; i++) {
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-o', 'cluster_size=4k,extended_l2=off', '-b', base!.path, '-F', 'qcow2', join(work, `dep-${i}.qcow2`)]);
  }
  row(`deployment of ${D} desktops (total)`, deploymentMs, ms(t0));

  // 3. Start to first VNC frame: through the API, the start queue and the viewer websocket,
  //    against QEMU started by hand with the same disk and a bare VNC socket.
  const token = await loginToken(server, 'manager');
  const [desktop] = await db.select().from(schema.domains).where(eq(schema.domains.userId, owner!.id));
  const startP: number[] = [];
  const startR: number[] = [];
  for (let i = 0; i < 3; i++) {
    let t0 = process.hrtime.bigint();
    await call(server, `/api/v3/desktop/start/${desktop!.id}`, { token });
    let viewer;
    for (;;) {
      const r = await call(server, `/api/v3/desktop/${desktop!.id}/viewer/browser-vnc`, { token });
      if (r.status === 200) {
        viewer = await r.json();
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    const ticket = JSON.parse(Buffer.from(viewer.cookie, 'base64url').toString());
    await firstFrameOverWebSocket(`${server.url.replace('http', 'ws')}/api/v3/vnc?token=${ticket.token}`, ticket.password);
    startP.push(ms(t0));
    await call(server, `/api/v3/desktop/stop/${desktop!.id}`, { token });
    await call(server, `/api/v3/desktop/stop/${desktop!.id}`, { token });
    while ((await db.select().from(schema.domains).where(eq(schema.domains.id, desktop!.id)))[0]!.status !== 'Stopped') await new Promise((r) => setTimeout(r, 50));

    const disk = join(work, `boot-${i}.qcow2`);
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base!.path, '-F', 'qcow2', disk]);
    const sock = join(work, `vnc-${i}.sock`);
    t0 = process.hrtime.bigint();
    const qemu = spawn('qemu-system-x86_64', ['-accel', decideAccel('auto').accel, '-machine', 'q35', '-m', '256', '-nodefaults', '-display', 'none', '-vga', 'std',
      '-drive', `file=${disk},format=qcow2,if=virtio`, '-vnc', `unix:${sock}`], { stdio: 'ignore' });
    while (!existsSync(sock)) await new Promise((r) => setTimeout(r, 5));
    await firstFrameOverUnix(sock, null);
    startR.push(ms(t0));
    qemu.kill('SIGKILL');
  }
  row('start to first VNC frame', median(startP), median(startR));
  console.log('');
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
