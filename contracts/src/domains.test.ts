import { describe, expect, it } from 'vitest';
import { ZDeploymentHardware } from './deployments';
import { ZReservablesUpdate, ZVgpusChoice } from './domains';

describe('ZVgpusChoice', () => {
  it('reads every way of saying "no GPU" as null, and a profile as itself', () => {
    for (const none of [null, [], ['None']]) expect(ZVgpusChoice.parse(none)).toBeNull();
    expect(ZVgpusChoice.parse(['NVIDIA-A40-2Q'])).toEqual(['NVIDIA-A40-2Q']);
    expect(ZVgpusChoice.safeParse(['NVIDIA-A40-2Q', 'NVIDIA-A40-4Q']).success).toBe(false);
    expect(ZVgpusChoice.safeParse('None').success).toBe(false);
  });

  it('is what the GPU edit and the deployments take', () => {
    expect(ZReservablesUpdate.parse({ vgpus: ['None'] })).toEqual({ vgpus: null });
    expect(ZDeploymentHardware.parse({ reservables: { vgpus: ['None'] } })).toEqual({ reservables: { vgpus: null } });
  });
});
