import { describe, expect, it } from 'vitest';
import type { DomainHardware } from '../db/schema';
import { ApiError } from '../http/errors';
import { assertGuestNetworkChoice } from '../modules/domains/guest';
import { nicsOf, privateMacOf } from '../modules/desktops/machine-spec';

const hw = (interfaces: { id: string; mac: string }[]) => ({ interfaces }) as unknown as DomainHardware;

describe('the wireguard interface on the guest network', () => {
  it('is a private NIC; default stays user-mode NAT; a missing MAC is a stable one', () => {
    const row = { id: 'd1', hardware: hw([{ id: 'default', mac: '52:54:00:00:00:01' }, { id: 'wireguard', mac: '' }]) };
    const nics = nicsOf(row);
    expect(nics[0]).toEqual({ id: 'default', mac: '52:54:00:00:00:01' });
    expect(nics[1]).toMatchObject({ id: 'wireguard', network: 'private' });
    expect(nics[1]!.mac).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
    expect(nicsOf(row)[1]!.mac).toBe(nics[1]!.mac);
    expect(privateMacOf(row)).toBe(nics[1]!.mac);
    expect(privateMacOf({ id: 'd2', hardware: hw([{ id: 'default', mac: '52:54:00:00:00:02' }]) })).toBeNull();
  });

  it('is refused where the server has no guest network, unless the edit keeps what was there', () => {
    const off = { available: false };
    const refused = (before: string[] | null, after: string[]) => {
      try {
        assertGuestNetworkChoice(off, before, after);
        return null;
      } catch (err) {
        return (err as ApiError).code;
      }
    };
    expect(refused(null, ['default', 'wireguard'])).toBe('guest_network_unavailable');
    expect(refused(['default'], ['default', 'wireguard'])).toBe('guest_network_unavailable');
    expect(refused(['default', 'wireguard'], ['default', 'wireguard'])).toBeNull();
    expect(refused(null, ['default'])).toBeNull();
    expect(() => assertGuestNetworkChoice({ available: true }, null, ['wireguard'])).not.toThrow();
  });
});
