import { describe, expect, it } from 'vitest';
import type { SeedResult } from './seed/seed';
import { welcomeText } from './welcome';

const result = (created: boolean) =>
  ({ created, accounts: [{ username: 'admin', role: 'admin', category: 'default', password: 'chosen-pass' }], registrationCode: null }) as unknown as SeedResult;

describe('the start banner', () => {
  it('tells to set DEMO_PASSWORD only when it is not set', () => {
    expect(welcomeText('http://x', result(true), true)).not.toContain('set DEMO_PASSWORD');
    expect(welcomeText('http://x', result(true), true)).toContain('the DEMO_PASSWORD you set');
    expect(welcomeText('http://x', result(true), false)).toContain('set DEMO_PASSWORD to choose one');
    expect(welcomeText('http://x', result(false), true)).not.toContain('set DEMO_PASSWORD');
  });
});
