export const MAX_SLOWDOWN: number;
export const EMULATED_GUESTS_SLOWDOWN: number;
export type Slowdown = { factor: number; probe: number; load: number; cores: number; emulated: boolean };
export function guestsEmulated(): boolean;
export function measureSlowdown(): Slowdown;
export function describeSlowdown(m: Slowdown): string;
export function testSlowdown(): number;
export function scaled(ms: number): number;
export function slowdown(): number;
