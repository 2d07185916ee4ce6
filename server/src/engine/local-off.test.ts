import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { createLocalEngine } from './index';
import { LOCAL_OFF_REASON } from './local-off';

describe('an engine without the local hypervisor (LOCAL_HYPERVISOR=off)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vdi-local-off-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('shows this machine offline with the reason, knows no machine and refuses a start', async () => {
    const engine = await createLocalEngine({ dataDir, accel: 'tcg', localHypervisor: false });
    try {
      const status = await engine.hosts.status(LOCAL_HYPERVISOR);
      expect(status).toMatchObject({ online: false, running: 0, lastError: LOCAL_OFF_REASON });
      expect(await engine.driver.list()).toEqual([]);
      expect(await engine.driver.status('any')).toBe('absent');
      await expect(engine.driver.start({ id: 'x' } as Parameters<typeof engine.driver.start>[0])).rejects.toMatchObject({ code: 'unsupported' });
    } finally {
      await engine.detach();
    }
  });
});
