import { z } from 'zod';
import type { TDesktop, TDirectViewer, TQueueEvent } from './desktops';
import type { TTemplate } from './templates';
import type { TMedia } from './media';
import type { TStorageEvent } from './storage';
import type { TRecycleBinItem, TRecycleBinStatusEvent } from './recycle-bin';
import type { TBookingSocketEvents } from './bookings';
import type { TSupportViewerEvent } from './admin-desktops';
import type { TCreatingDesktopsEvent, TDeployment, TDeploymentDeleteEvent, TDeploymentDesktop, TDeploymentDesktopDeleteEvent } from './deployments';

/** Socket path and namespace of the live connection (spec core §4 and 001 §7). */
export const SOCKET_PATH = '/api/v3/socket.io';
export const SOCKET_NAMESPACE = '/userspace';
/** Reconnection: unlimited, 1–2 s delay, 3 s timeout. */
export const SOCKET_OPTIONS = {
  reconnection: true,
  reconnectionAttempts: Infinity,
  reconnectionDelay: 1000,
  reconnectionDelayMax: 2000,
  randomizationFactor: 0.5,
  timeout: 3000,
} as const;
export const SOCKET_REJECTED = 'Connection rejected by server';

export const ZSocketMessage = z.object({
  type: z.enum(['info', 'warning', 'danger']),
  msg_code: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type TSocketMessage = z.infer<typeof ZSocketMessage>;

export const ZUserDataEvent = z.object({
  id: z.string(),
  email: z.string(),
  email_verified: z.number().nullable(),
  email_pending: z.string().nullable().optional(),
  name: z.string().optional(),
});

/**
 * Every live event and its payload, declared once (payloads travel as JSON strings,
 * as the original system sends them). Later areas add their events here.
 */
export type ServerToClientEvents = TBookingSocketEvents & {
  msg: TSocketMessage;
  desktop_add: TDesktop;
  desktop_update: TDesktop;
  desktop_delete: { id: string };
  desktops_queue: TQueueEvent;
  directviewer_update: TDirectViewer;
  users_data: z.infer<typeof ZUserDataEvent>;
  logout: { reason: string };
  media_add: TMedia;
  media_update: TMedia;
  media_delete: { id: string };
  storage: TStorageEvent;
  add_recycle_bin: TRecycleBinItem;
  update_recycle_bin: TRecycleBinStatusEvent;
  delete_recycle_bin: TRecycleBinStatusEvent;
  template_add: TTemplate;
  template_update: TTemplate;
  template_delete: { id: string };
  deployment_update: TDeployment;
  deployment_delete: TDeploymentDeleteEvent;
  deployments_add: TDeployment;
  deployments_update: TDeployment;
  deployments_delete: TDeploymentDeleteEvent;
  deploymentdesktop_add: TDeploymentDesktop;
  deploymentdesktop_update: TDeploymentDesktop;
  deploymentdesktop_delete: TDeploymentDesktopDeleteEvent;
  creating_desktops: TCreatingDesktopsEvent;
  end_creating_desktops: TCreatingDesktopsEvent;
  /** To a person waiting for a desktop pool: a prepared desktop is theirs now (the portal opens it). */
  desktop_pool_given: { pool_id: string; desktop_id: string };
  /**
   * A desktop pool's numbers or settings changed (its desktops, its queue, the pool itself): to the people who may
   * see it (its managers' pools screen, the pool cards of those it is shared with), at most one per pool every
   * ~250 ms. The screens read the pool again; the payload is the id only.
   */
  desktop_pool_changed: { pool_id: string };
  /** To a desktop's owner: support opened its screen (admin console). */
  support_viewer: TSupportViewerEvent;
};
export type ServerEventName = keyof ServerToClientEvents;
