export function ensureTestRun(root: string): string;
export function registerNamespace(name: string): void;
export function registerLink(name: string): void;
export function markedProcesses(name: string, value: string | undefined, opts?: { except?: number[]; children?: boolean | 'detached' }): { pid: number; command: string }[];
export function runNamespaces(processes: { pid: number }[], file?: string): string[];
export function sweepLeftovers(opts?: { file?: string; except?: number[]; children?: boolean | 'detached' }): string[];
export function endTestRun(): void;
export function ownsTestRun(): boolean;
