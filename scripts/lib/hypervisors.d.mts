type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
export function addLabHost(call: Call, host: { name: string; uri: string; hostKey: string }, fingerprintOf: (base64Key: string) => string): Promise<{ id: string; name: string }>;
export function untilOnline(call: Call, ids: string[], timeoutMs?: number): Promise<{ id: string; name: string; state: string; cpus: number; pools: { name: string }[] }[]>;
