import {
  WIREGUARD_INTERFACE,
  applyViewerNetworkRules,
  gpuOnlyViewersOk,
  ZGuestViewerKey,
  type TGuestChoice,
  type TGuestViewerKey,
} from '@vdi/contracts';
import type { GuestProperties } from '../../db/schema';
import { badRequest, precondition } from '../../http/errors';

export const viewerKeysOf = (g: GuestProperties): TGuestViewerKey[] =>
  Object.keys(g.viewers).filter((k): k is TGuestViewerKey => ZGuestViewerKey.safeParse(k).success);

/**
 * Viewers, credentials and networks after a person's choice, with the rules of spec core §5:
 * RDP viewers bring the wireguard network, removing it takes them away (default credentials
 * again), and at least one viewer stays.
 */
export function chooseGuest(
  prev: { guest: GuestProperties; interfaces: string[] },
  input: { guest?: TGuestChoice; interfaces?: string[] },
): { guest: GuestProperties; interfaces: string[] } {
  const before = { interfaces: prev.interfaces, viewers: viewerKeysOf(prev.guest), credentials: prev.guest.credentials };
  const wanted = {
    interfaces: input.interfaces ?? prev.interfaces,
    viewers: input.guest?.viewers ? (Object.keys(input.guest.viewers) as TGuestViewerKey[]) : before.viewers,
    credentials: input.guest?.credentials ?? before.credentials,
  };
  const r = applyViewerNetworkRules(before, wanted);
  if (r.viewers.length === 0) throw badRequest('one_viewer_minimum', 'Choose at least one viewer');
  return {
    interfaces: r.interfaces,
    guest: {
      credentials: { username: r.credentials.username, password: r.credentials.password },
      fullscreen: input.guest?.fullscreen ?? prev.guest.fullscreen,
      viewers: Object.fromEntries(r.viewers.map((v) => [v, { options: null }])),
    },
  };
}

/** "Only GPU" has no display for VNC or SPICE: only the RDP viewers work with it. */
export function assertGpuOnlyViewers(videos: string[], guest: GuestProperties) {
  if (!gpuOnlyViewersOk(videos, viewerKeysOf(guest))) throw badRequest('only_works_rdp', 'Only GPU works only with the RDP viewers');
}

/**
 * The wireguard network (and so the RDP viewers, which bring it) needs the server's guest network.
 * On a host without it a new choice of it is refused; `before` (an edit's current interfaces,
 * null for something new) passes unchanged, so an existing desktop stays editable.
 */
export function assertGuestNetworkChoice(network: { available: boolean }, before: string[] | null, after: string[]) {
  if (network.available || !after.includes(WIREGUARD_INTERFACE)) return;
  if (before?.includes(WIREGUARD_INTERFACE)) return;
  throw precondition('guest_network_unavailable', 'The private network (wireguard, RDP viewers) is not available on this server');
}
