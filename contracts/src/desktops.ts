import { z } from 'zod';

/** Desktop states as the web shows them (spec core §4); anything else shows as working. */
export const DESKTOP_STATES = [
  'notCreated', 'creating', 'readyCreation', 'starting', 'started', 'waitingip', 'stopping', 'stopped',
  'shutting-down', 'failed', 'working', 'downloading', 'paused', 'reset', 'updating', 'forcedeleting',
  'maintenance', 'unknown',
] as const;
export type TDesktopState = (typeof DESKTOP_STATES)[number];

/** Statuses kept in the database and sent on the wire, capitalised as the original system does. */
export const DOMAIN_STATUSES = [
  'Creating', 'CreatingAndStarting', 'Starting', 'Started', 'WaitingIP', 'Shutting-down', 'Stopping', 'Stopped',
  'Failed', 'Deleting', 'Maintenance', 'Unknown', 'Downloading', 'Paused',
] as const;
export type TDomainStatus = (typeof DOMAIN_STATUSES)[number];

/** The web's state: lower-cased status, unknown names shown as working. */
export function desktopState(status: string): TDesktopState {
  const s = status.toLowerCase();
  if (s === 'creatingandstarting' || s.startsWith('creating')) return 'creating';
  if (s === 'deleting') return 'forcedeleting';
  return (DESKTOP_STATES as readonly string[]).includes(s) ? (s as TDesktopState) : s === 'notcreated' ? 'notCreated' : 'working';
}

export type TDesktopAction = 'create' | 'start' | 'stop' | 'forceStop' | 'delete' | 'retry' | 'cancel';

/** The state → offered action table of spec core §4, one table for the server's checks and the cards. */
export const STATE_ACTION: Partial<Record<TDesktopState, TDesktopAction>> = {
  notCreated: 'create',
  stopped: 'start',
  started: 'stop',
  waitingip: 'stop',
  paused: 'stop',
  'shutting-down': 'forceStop',
  failed: 'retry',
  maintenance: 'cancel',
};

export function offeredAction(state: TDesktopState, persistent: boolean): TDesktopAction | null {
  if (!persistent && (state === 'started' || state === 'waitingip')) return 'delete';
  return STATE_ACTION[state] ?? null;
}

/*
 * The sets of statuses the server's checks use, read off the table above (a status is in a set
 * through its web state), so that the checks, the cards and the table never disagree.
 */
const statusesWhere = (inState: (state: TDesktopState) => boolean): readonly TDomainStatus[] =>
  DOMAIN_STATUSES.filter((s) => inState(desktopState(s)));
const offering = (action: TDesktopAction) => statusesWhere((state) => STATE_ACTION[state] === action);

/** A start is accepted (the table's `start`): Stopped. */
export const STARTABLE = offering('start');
/** A stop shuts the guest down (the table's `stop`): Started, WaitingIP, Paused. */
export const STOPPABLE = offering('stop');
/** A stop forces the machine off (the table's `forceStop`): Shutting-down. */
export const FORCE_STOPPABLE = offering('forceStop');
/** A retry is offered (the table's `retry`): Failed. */
export const RETRYABLE = offering('retry');
/** Nothing runs and nothing is under way: to start or to retry (disks may change, the desktop may go). */
export const AT_REST: readonly TDomainStatus[] = [...STARTABLE, ...RETRYABLE];
/** The machine runs and shows a display (a stop or force stop is offered): viewers open. */
export const VIEWABLE: readonly TDomainStatus[] = [...STOPPABLE, ...FORCE_STOPPABLE];
/** The machine exists on a hypervisor (it shows there, its uptime runs): running, or being stopped. */
export const ON_HYPERVISOR: readonly TDomainStatus[] = [...VIEWABLE, ...statusesWhere((state) => state === 'stopping')];
/** Being created (before the first start). */
export const CREATING: readonly TDomainStatus[] = statusesWhere((state) => state === 'creating');
/** On the way up: queued or booting, not yet running. */
export const GOING_UP: readonly TDomainStatus[] = ['Starting', 'CreatingAndStarting'];
/** The guest is up and not paused (it can be reset, the videowall shows it): Started, WaitingIP. */
export const GUEST_UP: readonly TDomainStatus[] = STOPPABLE.filter((s) => desktopState(s) !== 'paused');
/** The guest is up and past waiting for its address (bastion and VPN connect to it, when it has one): Started. */
export const REACHABLE: readonly TDomainStatus[] = statusesWhere((state) => state === 'started');
/** States in which a desktop holds resources (quota "running"): on the way up, up, shutting down (not paused). */
export const RUNNING_STATUSES: readonly TDomainStatus[] = [...GOING_UP, ...GUEST_UP, ...FORCE_STOPPABLE];

/** Whether `status` is one of `set` (statuses are plain strings in rows). */
export const statusIn = (set: readonly TDomainStatus[], status: string): boolean => (set as readonly string[]).includes(status);

export const VIEWERS = ['browser-vnc', 'file-spice', 'browser-rdp', 'file-rdpgw', 'file-rdpvpn'] as const;
export const ZViewer = z.enum(VIEWERS);
export type TViewer = z.infer<typeof ZViewer>;
/** Display order: vnc 1, spice 2, rdp 3, rdpgw 4, rdpvpn 5. */
export const VIEWER_ORDER: Record<TViewer, number> = { 'browser-vnc': 1, 'file-spice': 2, 'browser-rdp': 3, 'file-rdpgw': 4, 'file-rdpvpn': 5 };
/** Viewers that need the guest's address (and so the wireguard network). */
export const VIEWERS_NEEDING_IP: readonly TViewer[] = ['browser-rdp', 'file-rdpgw', 'file-rdpvpn'];
export const sortViewers = (v: readonly TViewer[]) => [...v].sort((a, b) => VIEWER_ORDER[a] - VIEWER_ORDER[b]);

export const ZDesktopImage = z.object({ id: z.string(), type: z.enum(['stock', 'user']), url: z.string() });

export const ZDesktop = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  state: z.string(),
  type: z.enum(['persistent', 'nonpersistent']),
  template: z.string().nullable(),
  viewers: z.array(ZViewer),
  icon: z.string(),
  image: ZDesktopImage,
  ip: z.string().nullable(),
  progress: z.object({ percentage: z.number(), throughput_average: z.string(), time_left: z.string(), size: z.string() }).nullable(),
  editable: z.boolean(),
  scheduled: z.object({ shutdown: z.union([z.string(), z.literal(false)]) }),
  /** While shutting down: when the server force-stops it (ISO 8601, UTC), the second stop of the reference's `forceStop`; else null. */
  force_stop_at: z.string().nullable(),
  server: z.boolean(),
  accessed: z.number().nullable(),
  tag: z.union([z.string(), z.literal(false)]),
  visible: z.boolean(),
  user: z.string(),
  user_name: z.string().nullable(),
  group: z.string(),
  group_name: z.string().nullable(),
  category: z.string(),
  category_name: z.string().nullable(),
  reservables: z.object({ vgpus: z.array(z.string()).nullable() }),
  interfaces: z.array(z.object({ id: z.string(), mac: z.string() })),
  current_action: z.string().nullable(),
  storage: z.array(z.string()),
  permissions: z.array(z.string()),
  needs_booking: z.boolean(),
  next_booking_start: z.string().nullable(),
  next_booking_end: z.string().nullable(),
  booking_id: z.union([z.string(), z.literal(false)]),
  /** Hardware at a glance, for the cards. */
  vcpus: z.number(),
  memory: z.number(),
  /** Where it runs while it is on a host (the hypervisor's name, never its address); null at rest. */
  hypervisor: z.string().nullable(),
});
export type TDesktop = z.infer<typeof ZDesktop>;

/** The desktop's top-level fields, in wire order: the choices of `?fields=`. */
export const DESKTOP_FIELDS = Object.keys(ZDesktop.shape) as [keyof TDesktop, ...(keyof TDesktop)[]];
export type TDesktopField = (typeof DESKTOP_FIELDS)[number];

/** The most items one page of a list may ask for (`per_page`). */
export const LIST_PER_PAGE_MAX = 1000;
/** A list's page size when `page` is given alone. */
export const LIST_PER_PAGE_DEFAULT = 50;

/**
 * Optional paging of a long list (`?page=1&per_page=50`, pages from 1). The answer stays a plain
 * array, in the list's usual order; a paged answer tells the whole list's length in the header
 * `x-total-count`. A page past the end is an empty array.
 */
export const ZListPaging = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).optional(),
  per_page: z.coerce.number().int().min(1).max(LIST_PER_PAGE_MAX).optional(),
});
export type TListPaging = z.infer<typeof ZListPaging>;
export const LIST_TOTAL_HEADER = 'x-total-count';

/** `?fields=id,name,state`: a comma list of top-level fields, each one of `names`; the items then carry only those. */
export const zFieldList = <F extends string>(names: readonly [F, ...F[]]) =>
  z
    .string()
    .max(1000)
    .transform((s) => s.split(',').map((f) => f.trim()).filter(Boolean))
    .pipe(z.array(z.enum(names)).min(1).max(names.length));

/**
 * GET /user/desktops (and the desktops of GET /deployment/{id}): without parameters the whole list
 * of full desktops, as the original system's clients expect; `page`/`per_page` and `fields` for
 * clients that want less. Unknown fields or bad numbers are refused (400 `validation_error`).
 */
export const ZDesktopListQuery = ZListPaging.extend({ fields: zFieldList(DESKTOP_FIELDS).optional() });
export type TDesktopListQuery = z.input<typeof ZDesktopListQuery>;
/** The answer: desktops, whole, or with only the asked `fields`. */
export const ZDesktopList = z.array(ZDesktop.partial());

export const ZDesktopActionParam = z.enum(['start', 'stop', 'reset', 'retry', 'updating']);
export const ZStatusAnswer = z.object({ status: z.string() });

/** A viewer answer: a file to download, or a page to open in the browser. */
export const ZViewerFile = z.object({ kind: z.literal('file'), protocol: z.string(), name: z.string(), ext: z.string(), mime: z.string(), content: z.string() });
export const ZViewerBrowser = z.object({
  kind: z.literal('browser'),
  protocol: z.string(),
  /** the page to open; clients of the original system put `cookie` in a `browser_viewer` cookie first */
  viewer: z.string(),
  /** the same page with the ticket in the fragment (opened as is) */
  urlp: z.string(),
  cookie: z.string(),
  values: z.record(z.string(), z.union([z.string(), z.number()])),
});
export const ZViewerAnswer = z.union([ZViewerFile, ZViewerBrowser]);
export type TViewerAnswer = z.infer<typeof ZViewerAnswer>;

export const ZQueueEvent = z.record(z.string(), z.object({ desktop_id: z.string(), event: z.string(), position: z.number() }));
export type TQueueEvent = z.infer<typeof ZQueueEvent>;

export const ZJumperUrl = z.object({ jumperurl: z.union([z.string(), z.literal(false)]) });
export const ZJumperReset = z.object({ disabled: z.boolean() }).strict();

export const ZDirectViewer = z.object({
  desktopId: z.string(),
  jwt: z.string(),
  vmName: z.string(),
  vmDescription: z.string(),
  vmState: z.string(),
  scheduled: z.object({ shutdown: z.union([z.string(), z.literal(false)]) }),
  /** As the desktop's: while shutting down, when the server force-stops it; else null. */
  force_stop_at: z.string().nullable(),
  viewers: z.record(z.string(), z.unknown()),
  needs_booking: z.boolean(),
  next_booking_start: z.string().nullable(),
  next_booking_end: z.string().nullable(),
});
export type TDirectViewer = z.infer<typeof ZDirectViewer>;

/** A template the user may start a temporary (nonpersistent) desktop from, or create one from. */
export const ZAllowedTemplate = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.literal('template'),
  description: z.string(),
  icon: z.string(),
  image: ZDesktopImage,
  category: z.string(),
  category_name: z.string(),
  group: z.string(),
  group_name: z.string(),
  user: z.string(),
  user_name: z.string(),
  status: z.string(),
});
export type TAllowedTemplate = z.infer<typeof ZAllowedTemplate>;

/** What the browser viewer page receives (in the URL fragment, never in a query or a log). */
export const ZBrowserViewerTicket = z.object({
  /** One-time token for the websocket /api/v3/vnc?token=… (valid 60 s, bound to user and desktop). */
  token: z.string(),
  /** VNC password set on the machine for this connection. */
  password: z.string(),
  name: z.string(),
  desktopId: z.string(),
  /** Whether this connection carries the clipboard (false when SPICE has the desktop's clipboard agent); absent: unknown. */
  clipboard: z.boolean().optional(),
});
export type TBrowserViewerTicket = z.infer<typeof ZBrowserViewerTicket>;
export const VNC_WEBSOCKET_PATH = '/api/v3/vnc';

/** What the browser RDP page (/rdp) receives, like the VNC ticket (fragment or `browser_viewer` cookie). */
export const ZRdpViewerTicket = z.object({
  /** One-time token the page puts in its RDCleanPath request (valid 60 s, bound to user and desktop). */
  token: z.string(),
  /** the desktop's guest credentials (the session signs in with them) */
  username: z.string(),
  password: z.string(),
  /** the desktop's own RDP endpoint (host:3389); the proxy connects there whatever the page says */
  destination: z.string(),
  name: z.string(),
  desktopId: z.string(),
  /** when the token expires (epoch seconds): a page opened later says so without trying */
  exp: z.number(),
});
export type TRdpViewerTicket = z.infer<typeof ZRdpViewerTicket>;
/** The RDCleanPath websocket of the browser RDP viewer (the token travels inside the first message, not in the URL). */
export const RDP_WEBSOCKET_PATH = '/api/v3/rdp';
/** The port of a desktop's RDP service: the only one the proxy and the gateway connect to. */
export const RDP_PORT = 3389;
/** The viewer websocket's promise: the screen's first bytes (the RFB version) within this bound,
 *  or a close with one of the reasons below. */
export const VNC_FIRST_BYTES_MS = 2000;
/** How the viewer websocket ends when the desktop's screen cannot be shown: an application close
 *  code, and as the reason a description_code that the viewer page translates. */
export const VNC_CLOSE = {
  /** the machine's VNC server could not be reached (gone, or refusing connections) */
  unreachable: { code: 4502, reason: 'viewer_display_unreachable' },
  /** it was reached but did not send its RFB version within the bound */
  timeout: { code: 4504, reason: 'viewer_display_timeout' },
} as const;

/** DELETE /desktop/{id}: the original answers {}; ours adds the recycle bin entry when it went there (the portal's "Undo"). */
export const ZDesktopDeleteAnswer = z.object({ recycle_bin_id: z.string().optional() });
