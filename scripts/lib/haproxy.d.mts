import type { ChildProcess } from 'node:child_process';

export const HAPROXY_CONFIG: string;
export function haproxyConfig(opts: { bind: string; stats: string; servers: { name: string; address: string }[] }): string;
export function startHaproxy(opts: { dir: string; config: string; stdio?: 'pipe' | 'inherit' | 'ignore' }): {
  child: ChildProcess;
  output(): string;
  exited: Promise<unknown>;
  stop(): Promise<void>;
};
export function serverStates(statsUrl: string): Promise<Record<string, string>>;
