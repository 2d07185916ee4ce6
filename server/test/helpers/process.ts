import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_PASSWORD, testImagesDir } from './server';
import type { Socket } from 'socket.io-client';
import type { TestServer } from './server';
import { socketOf, until } from './wait';
import { networkNames } from '../../src/network/plan';
import { registerNamespace } from '../../../scripts/lib/test-run.mjs';

const root = join(import.meta.dirname, '..', '..', '..');

/** The real server as `npm start` runs it (node --import tsx server/src/main.ts), as a child process. */
export type ServerProcess = {
  url: string;
  child: ChildProcess;
  /** Everything it wrote (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code or signal once it has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export async function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  // Its guest network's namespace (named after the data directory), should it make one.
  registerNamespace(networkNames(dataDir, { namespace: env.GUEST_NETWORK_NAMESPACE }).namespace);
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server', 'src', 'main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      IMAGES_DIR: testImagesDir(),
      DEMO_PASSWORD,
      LOG_LEVEL: 'info',
      WEB_DIST: join(dataDir, 'no-web'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  // The welcome text names the port it listens on (PORT=0: a free one); with a PUBLIC_URL it names that
  // address instead, and the port is the one given.
  const port = await until(
    'the server to listen',
    async () => {
      if (ended) throw new Error(`the server ended while starting:\n${out}`);
      const welcome = /running at (\S+)/.exec(out)?.[1];
      return welcome && (/^http:\/\/localhost:(\d+)/.exec(welcome)?.[1] ?? env.PORT);
    },
    120_000,
  );
  return { url: `http://127.0.0.1:${port}`, child, output: () => out, exited };
}

/** The QEMU processes machines of this data directory run as (their run directories). */
export function machinePids(dataDir: string): number[] {
  const runDir = join(dataDir, 'run');
  let ids: string[] = [];
  try {
    ids = readdirSync(runDir);
  } catch {
    return [];
  }
  return ids
    .map((id) => {
      try {
        return Number(readFileSync(join(runDir, id, 'qemu.pid'), 'utf8').trim());
      } catch {
        return NaN;
      }
    })
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Ends the machines a test left running (they outlive the server by design). */
export function killMachines(dataDir: string) {
  for (const pid of machinePids(dataDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Signs in with the form provider and answers the session token. */
export async function signIn(url: string, username: string, categoryId = 'default'): Promise<string> {
  const form = new FormData();
  form.append('username', username);
  form.append('password', DEMO_PASSWORD);
  const res = await fetch(`${url}/authentication/login?provider=form&category_id=${categoryId}`, { method: 'POST', body: form });
  if (!res.ok) throw new Error(`sign-in of ${username} failed: ${res.status}`);
  return res.text();
}

export async function api<T = unknown>(url: string, token: string, path: string, opts: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/api/v3${path}`, {
    method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'),
    headers: { authorization: `Bearer ${token}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** The demo's groups a crash test deploys to, and how many people they hold (admin, manager, advanced, user, student01…04). */
export const DEMO_DEPLOYMENT = { groups: ['default-default', 'default-teachers', 'default-students-1a', 'default-students-1b'], users: 8 };

/**
 * Makes a deployment of the first template for the demo's groups through `url` and resolves with its id
 * once its first desktop exists (the moment the crash tests kill the process: the chunk under way is
 * half-made), and the socket that heard it (the caller closes it).
 */
export async function deploymentAtFirstDesktop(url: string, token: string, name: string): Promise<{ id: string; socket: Socket }> {
  const socket = await socketOf({ url } as TestServer, token);
  const firstMade = new Promise<void>((done) => socket.on('creating_desktops', (raw: string) => JSON.parse(raw).created >= 1 && done()));
  const [template] = (await api<{ id: string }[]>(url, token, '/user/templates')).body;
  const made = await api<{ id: string }>(url, token, '/deployments', {
    body: {
      name, description: '', template_id: template!.id, desktop_name: `${name} desktop`, visible: true,
      allowed: { groups: DEMO_DEPLOYMENT.groups, users: false }, user_permissions: [],
    },
  });
  if (made.status !== 200) throw new Error(`deployment not made: ${made.status} ${JSON.stringify(made.body)}`);
  await firstMade;
  return { id: made.body.id, socket };
}

/** Resolves once deployment `id`, asked through `url`, has one desktop per demo user and none being made. */
export async function untilDeploymentMade(url: string, token: string, id: string, ms: number): Promise<void> {
  await until(
    `deployment ${id} to be made`,
    async () => {
      const d = (await api<{ id: string; totalDesktops: number; creatingDesktops: number }[]>(url, token, '/deployments')).body.find((x) => x.id === id);
      return d && d.creatingDesktops === 0 && d.totalDesktops === DEMO_DEPLOYMENT.users;
    },
    ms,
  );
}
