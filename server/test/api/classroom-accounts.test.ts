import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { and, eq, inArray } from 'drizzle-orm';
import { ZAdminPasswordResetAnswer, type TCredentialRow } from '@vdi/contracts';
import { schema } from '../../src/db';
import { createLog } from '../../src/http/log';
import { verifyPassword } from '../../src/auth/passwords';
import { runProgram } from '../../src/host/programs';
import { call, login, startTestServer, type TestServer } from '../helpers/server';
import { copyUser, tokenOf } from '../helpers/routes-fixtures';
import { scaled } from '../helpers/slowdown';
import { DIGITS, LOWER, SIGNS, UPPER } from '../../src/modules/admin/users/one-time-password';

// Classroom accounts (issue 28): one-time passwords for many users at once, each refused user with
// its reason, managers within their organisation, the sign-in step that follows, the credentials
// sheet from the configured address only, and no password in the server's log.

const A = '/api/v3/admin';
let server: TestServer;
const logLines: string[] = [];
let admin = '';
let manager = '';
let labManager = '';
const LABELS = { title: 'Accounts', name: 'Name', username: 'User name', password: 'One-time password', address: 'Sign-in address', organisation: 'Organisation', change_hint: 'Change it at the first sign-in.' };

const reset = async (token: string, ids: string[]) => {
  const res = await call(server, `${A}/users/password-reset`, { token, body: { ids } });
  expect(res.status).toBe(200);
  return ZAdminPasswordResetAnswer.parse(await res.json());
};
const bearerPost = (path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
let n = 0;
const pupil = async (opts: { category?: string; group?: string; provider?: string; role?: string } = {}) => {
  const row = await copyUser(server, { username: 'student02' }, `pupil${++n}-${Math.random().toString(36).slice(2, 6)}`);
  await server.ctx.db
    .update(schema.users)
    .set({ categoryId: opts.category ?? 'default', groupId: opts.group ?? 'default-students-1a', provider: opts.provider ?? 'local', roleId: opts.role ?? 'user' })
    .where(eq(schema.users.id, row.id));
  return row;
};

beforeAll(async () => {
  server = await startTestServer({
    env: { PUBLIC_URL: 'https://portal.example.edu' },
    log: createLog('debug', { write: (line: string) => void logLines.push(line) }),
  });
  const lab = await copyUser(server, { username: 'manager' }, 'labmanager');
  await server.ctx.db.update(schema.users).set({ categoryId: 'lab', groupId: 'lab-default' }).where(eq(schema.users.id, lab.id));
  admin = await tokenOf(server, 'admin');
  manager = await tokenOf(server, 'manager');
  labManager = await tokenOf(server, 'labmanager', 'lab');
}, scaled(240_000));
afterAll(async () => server?.close());

describe('one-time passwords for a class', () => {
  const seen: string[] = [];

  it('resets every local user of the batch and refuses the others one by one, with why', async () => {
    const class1 = [await pupil(), await pupil(), await pupil()];
    const directory = await pupil({ provider: 'ldap' });
    const me = (await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'admin')))[0]!;
    const answer = await reset(admin, [...class1.map((u) => u.id), directory.id, me.id, 'no-such-user']);
    expect(answer.reset.map((r) => r.username).sort()).toEqual(class1.map((u) => u.username).sort());
    expect(answer.refused).toEqual(
      expect.arrayContaining([
        { id: directory.id, username: directory.username, name: directory.name, description_code: 'password_reset_not_local' },
        { id: me.id, username: 'admin', name: me.name, description_code: 'password_reset_self' },
        { id: 'no-such-user', username: null, name: null, description_code: 'user_not_found' },
      ]),
    );
    expect(answer.sign_in_url).toBe('https://portal.example.edu/login');
    const rows = await server.ctx.db.select().from(schema.users).where(inArray(schema.users.id, class1.map((u) => u.id)));
    for (const r of answer.reset) {
      seen.push(r.password);
      expect(r.organisation).toBe('Default');
      expect(r.password).toMatch(new RegExp(`^[${LOWER}${UPPER}${DIGITS}${SIGNS}]{4}(-[${LOWER}${UPPER}${DIGITS}${SIGNS}]{1,4})+$`));
      const row = rows.find((x) => x.id === r.id)!;
      expect(row.passwordResetRequired).toBe(true);
      expect(row.passwordHash).not.toContain(r.password);
      expect(await verifyPassword(row.passwordHash, r.password)).toBe(true);
    }
    // The directory's account is untouched.
    const [dir] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, directory.id));
    expect(dir!.passwordResetRequired).toBe(false);
    // One audit entry per reset user, none for the refused.
    const entries = await server.ctx.db
      .select()
      .from(schema.auditLog)
      .where(and(eq(schema.auditLog.action, 'user.password_reset'), inArray(schema.auditLog.objectId, [...class1.map((u) => u.id), directory.id])));
    expect(entries.map((e) => e.objectId).sort()).toEqual(class1.map((u) => u.id).sort());
    expect(JSON.stringify(entries)).not.toContain(answer.reset[0]!.password);
  });

  it('keeps managers within their organisation and away from admins', async () => {
    const ours = await pupil();
    const theirs = await pupil({ category: 'lab', group: 'lab-default' });
    const anAdmin = await pupil({ role: 'admin' });
    const answer = await reset(manager, [ours.id, theirs.id, anAdmin.id]);
    expect(answer.reset.map((r) => r.id)).toEqual([ours.id]);
    seen.push(answer.reset[0]!.password);
    expect(answer.refused).toEqual(
      expect.arrayContaining([
        { id: theirs.id, username: null, name: null, description_code: 'user_not_found' },
        { id: anAdmin.id, username: anAdmin.username, name: anAdmin.name, description_code: 'forbidden' },
      ]),
    );
    const lab = await reset(labManager, [theirs.id, ours.id]);
    expect(lab.reset.map((r) => r.id)).toEqual([theirs.id]);
    expect(lab.reset[0]!.organisation).not.toBe('Default');
    seen.push(lab.reset[0]!.password);
    // Advanced users and students may not call it at all.
    const teacher = await tokenOf(server, 'advanced');
    expect((await call(server, `${A}/users/password-reset`, { token: teacher, body: { ids: [ours.id] } })).status).toBe(403);
  });

  it('sends the person to the password step after signing in with it, then to the portal', async () => {
    const student = await pupil();
    const before = await tokenOf(server, student.username);
    const [r] = (await reset(admin, [student.id])).reset;
    seen.push(r!.password);
    // Their earlier session ended with the reset.
    expect((await call(server, '/api/v3/user', { token: before })).status).toBe(401);
    expect((await login(server, student.username)).res.status).toBe(401);
    const { token } = await login(server, student.username, r!.password);
    expect(decodeJwt(token!).type).toBe('password-reset-required');
    // The one-time password may not be kept.
    const same = await bearerPost('/authentication/reset-password', token!, { password: r!.password });
    expect(same.status).toBe(400);
    expect((await same.json()).description_code).toBe('password_unchanged');
    expect((await bearerPost('/authentication/reset-password', token!, { password: 'my-own-secret-42' })).status).toBe(200);
    const { token: session } = await login(server, student.username, 'my-own-secret-42');
    expect(decodeJwt(session!).type).toBeUndefined();
    const [row] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.id, student.id));
    expect(row!.passwordResetRequired).toBe(false);
  });

  it('refuses bad input with a description code', async () => {
    for (const body of [{ ids: [] }, { ids: 'x' }, { ids: Array.from({ length: 101 }, (_, i) => `u${i}`) }, { ids: ['a'], extra: 1 }]) {
      const res = await call(server, `${A}/users/password-reset`, { token: admin, body });
      expect(res.status).toBe(400);
      expect((await res.json()).description_code).toBeTruthy();
    }
    const sheet = await call(server, `${A}/users/credentials-sheet`, { token: admin, body: { format: 'doc', rows: [], labels: LABELS } });
    expect(sheet.status).toBe(400);
  });

  it('writes no password into the server log', () => {
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(logLines.length).toBeGreaterThan(10);
    const log = logLines.join('\n');
    for (const p of seen) expect(log).not.toContain(p);
  });
});

describe('the credentials sheet', () => {
  const rows: TCredentialRow[] = [
    { name: 'Àlex Núñez', username: 'anunez', password: 'k7Pm-x3Ta-9aRw', organisation: 'Escola Pública' },
    { name: '王小明', username: 'wang', password: 'Hc4e-Ty7n-Xw3d', organisation: '北京第一中学' },
    { name: 'Пётр Ильин', username: 'pilyin', password: 'Mx9f-Rk3e-Ja7t', organisation: 'Школа' },
    { name: '김민준', username: 'minjun', password: 'Wf6s-Np4k-Cy9h', organisation: '서울학교' },
  ];

  it('is a UTF-8 CSV with a byte-order mark and the configured address, whatever the Host header says', async () => {
    const res = await bearerPost(`${A}/users/credentials-sheet`, admin, { format: 'csv', rows, labels: LABELS }, { 'x-forwarded-host': 'evil.example', host: 'evil.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    expect(text.split('\r\n')).toEqual([
      '\uFEFFName,User name,One-time password,Sign-in address,Organisation',
      'Àlex Núñez,anunez,k7Pm-x3Ta-9aRw,https://portal.example.edu/login,Escola Pública',
      '王小明,wang,Hc4e-Ty7n-Xw3d,https://portal.example.edu/login,北京第一中学',
      'Пётр Ильин,pilyin,Mx9f-Rk3e-Ja7t,https://portal.example.edu/login,Школа',
      '김민준,minjun,Wf6s-Np4k-Cy9h,https://portal.example.edu/login,서울학교',
      '',
    ]);
    expect(text).not.toContain('evil.example');
  });

  it('is an A4 PDF with one card per person, names in any script', async () => {
    const many = Array.from({ length: 23 }, (_, i) => ({ ...rows[i % rows.length]!, username: `${rows[i % rows.length]!.username}${i}` }));
    const res = await bearerPost(`${A}/users/credentials-sheet`, admin, { format: 'pdf', rows: many, labels: LABELS });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await res.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const dir = mkdtempSync(join(tmpdir(), 'sheet-'));
    try {
      writeFileSync(join(dir, 's.pdf'), pdf);
      // Debian's poppler-utils reads it back: A4 pages, ten cards a page, every name and password.
      const info = await runProgram('pdfinfo', [join(dir, 's.pdf')]);
      expect(info).toMatch(/Pages:\s+3/);
      expect(info).toMatch(/Page size:\s+595\.28 x 841\.89 pts \(A4\)/);
      const text = await runProgram('pdftotext', ['-layout', join(dir, 's.pdf'), '-']);
      for (const name of ['Àlex Núñez', '王小明', 'Пётр Ильин', '김민준', 'Escola Pública', '北京第一中学', 'k7Pm-x3Ta-9aRw', 'https://portal.example.edu/login', 'wang21']) {
        expect(text).toContain(name);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is refused without a configured public address', async () => {
    const saved = server.ctx.config.publicUrl;
    server.ctx.config.publicUrl = undefined;
    try {
      const res = await call(server, `${A}/users/credentials-sheet`, { token: admin, body: { format: 'csv', rows, labels: LABELS } });
      expect(res.status).toBe(428);
      expect((await res.json()).description_code).toBe('public_url_not_configured');
    } finally {
      server.ctx.config.publicUrl = saved;
    }
  });
});
