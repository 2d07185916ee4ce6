// The programs this host runs (qemu-img, ip, dnsmasq, wg, wireguard-go, nft): one runner below the
// engine, the guest network and the VPN, which all take it from here. Always an argument array,
// never a shell: arguments come from users' names. A driver for another machine runs its programs there.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { setPriority } from 'node:os';
import { join } from 'node:path';

type SpawnAnswer = { id: number; err?: { message: string; code: number | null } | null; stdout: string; stderr: string };
/** The helper, its answers' pipe (a socket: referenced only while a request waits) and how to ask it. */
type Helper = { child: ChildProcess; answers: Socket; send: (request: object) => void };
let spawner: Helper | undefined;
let nextId = 0;
const waiting = new Map<number, (a: SpawnAnswer) => void>();

/** The Python the program helper runs on: the system's (Debian's python3), else the first on PATH. */
function findPython(): string | undefined {
  const dirs = ['/usr/bin', ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  return dirs.map((dir) => join(dir, 'python3')).find((file) => existsSync(file));
}

/**
 * The program helper (spawner.py), started on first use: it starts every program with posix_spawn,
 * which costs this server nothing (Node's own child_process forks: a copy of the server's page
 * tables and ~1 ms of JavaScript per child, measured). Requests and answers are JSON lines on its
 * stdin and stdout. It ends with the server (its stdin closes) and never keeps the server alive.
 * Without a python3 the server starts programs itself.
 */
function spawnerProcess(): Helper | undefined {
  if (spawner && spawner.child.exitCode === null && spawner.child.signalCode === null && spawner.child.stdin?.writable) return spawner;
  const python = findPython();
  if (!python) return undefined;
  try {
    const child = spawn(python, ['-I', '-S', join(import.meta.dirname, 'spawner.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    readJsonLines(child, (message) => {
      const a = message as SpawnAnswer;
      waiting.get(a.id)?.(a);
      waiting.delete(a.id);
    });
    const lost = () => {
      if (spawner?.child === child) spawner = undefined;
      for (const [id, answer] of waiting) answer({ id, err: { message: 'the helper process ended', code: null }, stdout: '', stderr: '' });
      waiting.clear();
    };
    child.on('exit', lost);
    child.on('error', lost);
    child.stdin!.on('error', lost);
    child.unref();
    const answers = child.stdout as Socket;
    answers.unref();
    spawner = { child, answers, send: (request) => child.stdin!.write(`${JSON.stringify(request)}\n`) };
    return spawner;
  } catch {
    return undefined;
  }
}

/** Each JSON line a helper writes on its stdout, parsed, in order. */
function readJsonLines(child: ChildProcess, onMessage: (message: unknown) => void) {
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      onMessage(JSON.parse(line));
    }
  });
}

/** A program run through the helper process failed: its exit code (null: it did not run or was killed) and its stderr. */
export type ProgramFailure = { code: number | null; stderr: string };

/**
 * Runs a program (argument array, never a shell) through the helper process when it is there, and
 * answers its stdout; rejects with a `ProgramFailure`. Used for qemu-img, the guest network's
 * `ip` commands and the VPN's `wg` and `nft` alike.
 */
export function runProgram(file: string, args: readonly string[], opts: { timeoutMs?: number; background?: boolean } = {}): Promise<string> {
  // Background work (a disk being made while people wait on the server) at a lower CPU priority:
  // the server, its database and the viewers answer first, and the program takes the rest of the
  // cores. Otherwise 25 qemu-img runs share the CPU evenly with the server that must answer 25 people.
  const nice = opts.background ? BACKGROUND_NICENESS : 0;
  const helper = spawnerProcess();
  if (helper) {
    return new Promise((resolvePromise, reject) => {
      const id = nextId++;
      // A request keeps the helper's answers (and so the server's event loop) referenced while it is answered.
      helper.answers.ref();
      waiting.set(id, ({ err, stdout, stderr }) => {
        if (waiting.size <= 1) helper.answers.unref();
        if (!err) return resolvePromise(stdout);
        reject({ code: err.code, stderr: stderr || err.message } satisfies ProgramFailure);
      });
      try {
        helper.send({ id, file, args, timeoutMs: opts.timeoutMs ?? 0, maxBuffer: 16 * 1024 * 1024, nice });
      } catch (err) {
        waiting.delete(id);
        reject({ code: null, stderr: (err as Error).message } satisfies ProgramFailure);
      }
    });
  }
  return new Promise((resolvePromise, reject) => {
    const child = execFile(file, args, { maxBuffer: 16 * 1024 * 1024, timeout: opts.timeoutMs ?? 0, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolvePromise(stdout);
      reject({ code: typeof err.code === 'number' ? err.code : null, stderr: stderr || err.message } satisfies ProgramFailure);
    });
    lowerPriority(child.pid, nice);
  });
}

/** A started program's CPU priority lowered to `nice` (0: left as it is; a program already gone is no matter). */
function lowerPriority(pid: number | undefined, nice: number) {
  if (!nice || !pid) return;
  try {
    setPriority(pid, nice);
  } catch {
    // It ended already, or this system refuses: it runs at the server's priority.
  }
}

/** The niceness of background programs (qemu-img): below the server's, within what any user may set. */
export const BACKGROUND_NICENESS = 10;

/**
 * Starts a long-lived program detached from the server (dnsmasq, wireguard-go): it keeps serving
 * while the server restarts, and a later server adopts it. Its stdout and stderr go to `logFile`
 * (appended, mode 0600). The caller watches the child's `exit` and `error` while it starts.
 */
export function startDaemon(file: string, args: readonly string[], opts: { logFile: string; env?: NodeJS.ProcessEnv }): ChildProcess {
  const logFd = openSync(opts.logFile, 'a', 0o600);
  try {
    const child = spawn(file, args, { detached: true, stdio: ['ignore', logFd, logFd], ...(opts.env ? { env: opts.env } : {}) });
    child.unref();
    return child;
  } finally {
    closeSync(logFd);
  }
}

/** A long-lived helper program that speaks JSON lines (one per message) on its stdin and stdout. */
export type JsonLinesHelper = {
  send: (message: object) => void;
  /** ends it: its stdin closes and it exits by itself */
  end: () => void;
  /** ends it at once (SIGKILL): one that does not exit after `end` (e.g. blocked on a host that vanished) */
  kill: () => void;
  /** the process's id (to end it on purpose in a test) */
  pid: number | undefined;
  /** keeps the server's event loop referenced while answers are awaited (true) or not */
  hold: (on: boolean) => void;
};

/**
 * Starts a Python helper (e.g. the libvirt driver's) with the system's python3 (its binding lives
 * in Debian's dist-packages), JSON lines both ways, as the program helper. It ends with the server
 * (its stdin closes) and never keeps the server alive; its stderr goes to the server's.
 */
export function startJsonLinesHelper(
  script: string,
  onMessage: (message: unknown) => void,
  onExit: (reason: string) => void,
): JsonLinesHelper {
  const python = findPython();
  if (!python) throw new Error('python3 is not installed');
  const child = spawn(python, ['-I', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  readJsonLines(child, onMessage);
  let ended = false;
  const exit = (reason: string) => {
    if (ended) return;
    ended = true;
    onExit(reason);
  };
  child.on('exit', (code, signal) => exit(signal ? `signal-${signal}` : `exit-code-${code}`));
  child.on('error', (err) => exit(err.message));
  child.stdin!.on('error', () => {});
  child.unref();
  (child.stdout as Socket).unref();
  return {
    pid: child.pid,
    send: (message) => {
      if (!ended) child.stdin!.write(`${JSON.stringify(message)}\n`);
    },
    end: () => child.stdin!.end(),
    kill: () => void child.kill('SIGKILL'),
    hold: (on) => (on ? (child.stdout as Socket).ref() : (child.stdout as Socket).unref()),
  };
}
