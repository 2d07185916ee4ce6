import { z } from 'zod';
import { ZDesktopImage } from './desktops';
import { ZRestrictionApplied } from './quota';

/**
 * Desktops and templates as the edit screen and the new-desktop screen see them (spec core §3
 * "Domain", §5 hardware choices, reference §2.5). Memory travels in GB, disk sizes in GB.
 */

/** Desktop names: 4–50 characters of letters, numbers, space, comma, period, hyphen, underscore. */
export const DOMAIN_NAME_MIN = 4;
export const DOMAIN_NAME_MAX = 50;
export const DOMAIN_DESCRIPTION_MAX = 255;
export const DOMAIN_NAME_PATTERN = /^[\p{L}\p{N} ,._-]+$/u;
export const ZDomainName = z.string().trim().min(DOMAIN_NAME_MIN).max(DOMAIN_NAME_MAX).regex(DOMAIN_NAME_PATTERN);
export const ZDomainDescription = z.string().trim().max(DOMAIN_DESCRIPTION_MAX);

/** Hardware choices: memory in 0.5 GB steps, vCPUs and disk size in steps of 1 (spec core §5, §9). */
export const MEMORY_STEP_GB = 0.5;
export const DEFAULT_HARDWARE = { memory: 1, vcpus: 1, disk_size: 1 } as const;
/** A memory amount the forms offer: a positive multiple of 0.5 GB. */
export const isMemoryStep = (gb: number) => gb > 0 && Number.isInteger(gb / MEMORY_STEP_GB);

export const DISK_BUSES = ['default', 'virtio', 'ide', 'sata'] as const;
export const ZDiskBus = z.enum(DISK_BUSES);
export const BOOT_DEVICES = ['disk', 'iso', 'network'] as const;
export const ZBootDevice = z.enum(BOOT_DEVICES);

/** Guest viewers as stored (keys of guest_properties.viewers). */
export const GUEST_VIEWER_KEYS = ['browser_vnc', 'file_spice', 'browser_rdp', 'file_rdpgw', 'file_rdpvpn'] as const;
export const ZGuestViewerKey = z.enum(GUEST_VIEWER_KEYS);
export type TGuestViewerKey = z.infer<typeof ZGuestViewerKey>;
/** The RDP viewers need the guest's address, so the wireguard network (spec core §3 viewer definitions). */
export const RDP_VIEWER_KEYS: readonly TGuestViewerKey[] = ['browser_rdp', 'file_rdpgw', 'file_rdpvpn'];
export const WIREGUARD_INTERFACE = 'wireguard';
export const DEFAULT_INTERFACE = 'default';
/** Default guest credentials (reference §7), restored when the RDP viewers go away with wireguard. */
export const DEFAULT_GUEST_CREDENTIALS = { username: 'isard', password: 'pirineus' } as const;
/** "Only GPU": no virtual display card, the GPU's own output reached over RDP. */
export const GPU_ONLY_VIDEO = 'none';
export const DEFAULT_VIDEO = 'default';

export const ZGuestViewers = z.partialRecord(ZGuestViewerKey, z.object({ options: z.null().default(null) }));
export type TGuestViewers = z.infer<typeof ZGuestViewers>;
export const ZGuestCredentials = z.object({ username: z.string().max(100), password: z.string().max(100) });
export const ZGuestProperties = z.object({ credentials: ZGuestCredentials, fullscreen: z.boolean(), viewers: ZGuestViewers });
export type TGuestProperties = z.infer<typeof ZGuestProperties>;

/** One choice of a hardware list: {id, name, description} (reference §2.5). */
export const ZHardwareItem = z.object({ id: z.string(), name: z.string(), description: z.string() });
export type THardwareItem = z.infer<typeof ZHardwareItem>;

/** The hardware bounds that apply to the user: the applied quota, or the fallback 128 / 128 / 500. */
export const ZHardwareQuota = z.object({ memory: z.number(), vcpus: z.number(), desktops_disk_size: z.number() });
export type THardwareQuota = z.infer<typeof ZHardwareQuota>;

/** GET /user/hardware/allowed */
export const ZHardwareAllowed = z.object({
  interfaces: z.array(ZHardwareItem),
  graphics: z.array(ZHardwareItem),
  videos: z.array(ZHardwareItem),
  boot_order: z.array(ZHardwareItem),
  disk_bus: z.array(ZHardwareItem),
  reservables: z.object({ vgpus: z.array(ZHardwareItem) }),
  quota: ZHardwareQuota,
  restriction_applied: ZRestrictionApplied,
  /** The viewers this server can open (without the guest network, no RDP viewer). */
  viewers: z.array(ZGuestViewerKey).optional(),
});
export type THardwareAllowed = z.infer<typeof ZHardwareAllowed>;

/** What the original portal sends for "no GPU" (`vgpus: ["None"]`, reference §2.5). */
export const NO_GPU = 'None';
/**
 * A GPU choice: one profile id, or none — null, [] or the original portal's ["None"]. Parsed to
 * the chosen profile ids, or null when there is none (the one normalisation of every route that
 * takes `reservables.vgpus`).
 */
export const ZVgpusChoice = z
  .array(z.string().max(64))
  .max(1)
  .nullable()
  .transform((v) => {
    const ids = (v ?? []).filter((id) => id !== NO_GPU);
    return ids.length > 0 ? ids : null;
  });

/** Hardware a person may choose (new desktop, edit). Memory in GB, disk size in whole GB. */
export const ZHardwareChoice = z.object({
  vcpus: z.number().int().min(1).max(1024),
  memory: z.number().positive().max(65536),
  disk_size: z.number().int().min(1).max(1_000_000),
  disk_bus: ZDiskBus,
  boot_order: z.array(ZBootDevice).min(1).max(3),
  interfaces: z.array(z.string().max(64)).max(8),
  videos: z.array(z.string().max(64)).min(1).max(4),
  graphics: z.array(z.string().max(64)).max(4),
  /** The install type (GET /media/installs) the guest was made for. */
  install: z.string().max(64),
});
export type THardwareChoice = z.infer<typeof ZHardwareChoice>;

export const ZGuestChoice = z.object({ viewers: ZGuestViewers, credentials: ZGuestCredentials, fullscreen: z.boolean() }).partial();
export type TGuestChoice = z.infer<typeof ZGuestChoice>;

/** POST /persistent_desktop */
export const ZNewDesktop = z.object({
  name: ZDomainName,
  description: ZDomainDescription.default(''),
  template_id: z.string().min(1).max(64),
  hardware: ZHardwareChoice.omit({ install: true }).partial().optional(),
  guest_properties: ZGuestChoice.optional(),
  image: z.object({ type: z.literal('stock'), id: z.string().max(64) }).optional(),
});
export type TNewDesktop = z.input<typeof ZNewDesktop>;
export const ZNewDesktopAnswer = z.object({ id: z.string() });

/** GET /domain/info/{id} */
export const ZDomainInfo = z.object({
  id: z.string(),
  kind: z.enum(['desktop', 'template']),
  name: z.string(),
  description: z.string(),
  status: z.string(),
  server: z.boolean(),
  image: ZDesktopImage,
  guest_properties: ZGuestProperties,
  hardware: z.object({
    vcpus: z.number(),
    /** GB */
    memory: z.number(),
    boot_order: z.array(z.string()),
    disk_bus: z.string(),
    /** GB of the first disk (virtual size) */
    disk_size: z.number(),
    disks: z.array(z.object({ id: z.string(), size: z.number(), used: z.number(), parent: z.string().nullable() })),
    interfaces: z.array(z.object({ id: z.string(), mac: z.string() })),
    videos: z.array(z.string()),
    graphics: z.array(z.string()),
    isos: z.array(z.object({ id: z.string(), name: z.string() })),
    floppies: z.array(z.object({ id: z.string(), name: z.string() })),
    install: z.string().nullable(),
  }),
  reservables: z.object({ vgpus: z.array(z.string()).nullable() }),
  /** Something of the domain is beyond what the user may choose (their quota). */
  limited_hardware: z.boolean(),
  /** Stopped, not a server, and the caller may change it. */
  editable: z.boolean(),
  template: z.object({ id: z.string(), name: z.string() }).nullable(),
  user: z.string(),
  user_name: z.string().nullable(),
});
export type TDomainInfo = z.infer<typeof ZDomainInfo>;

export const IMAGE_UPLOAD_MAX_BYTES = 1024 * 1024;
export const ZImageChoice = z.union([
  z.object({ type: z.literal('stock'), id: z.string().max(64) }),
  /** An upload: the file's bytes in base64, at most 1 MB decoded (PNG, JPEG, GIF or WebP). */
  z.object({ type: z.literal('user'), file: z.object({ filename: z.string().max(255), data: z.string().max(1_500_000) }) }),
]);
export type TImageChoice = z.infer<typeof ZImageChoice>;

/** PUT /domain/{id}: what changes; anything left out stays. */
export const ZDomainUpdate = z.object({
  name: ZDomainName.optional(),
  description: ZDomainDescription.optional(),
  hardware: ZHardwareChoice.omit({ disk_size: true }).partial().optional(),
  guest_properties: ZGuestChoice.optional(),
  image: ZImageChoice.optional(),
});
export type TDomainUpdate = z.input<typeof ZDomainUpdate>;

/** PUT /domain/reservables/{id}: a GPU profile, or none. */
export const ZReservablesUpdate = z.object({ vgpus: ZVgpusChoice });

/** GET /images/desktops: the stock covers (and the desktop's own upload, when asked with desktop_id). */
export const ZDesktopImageChoice = ZDesktopImage.extend({ name: z.string() });
export type TDesktopImageChoice = z.infer<typeof ZDesktopImageChoice>;

/** GET /media/installs: the guest operating system types the edit form offers. */
export const ZInstallType = z.object({ id: z.string(), name: z.string(), description: z.string(), disk_bus: ZDiskBus });
export type TInstallType = z.infer<typeof ZInstallType>;

/** GET /desktop/new/check_quota answers {} when one more fits (else 428 with a quota code). */
export const ZCheckQuotaAnswer = z.object({});

/* ----------------------------------------------------------------------------------------------- */

type GuestState = { interfaces: string[]; viewers: TGuestViewerKey[]; credentials: { username: string; password: string } };

/**
 * The viewer ↔ wireguard rules of spec core §5, one function for the form and the server:
 * choosing an RDP viewer adds the wireguard network; removing wireguard removes the RDP
 * viewers and restores the default guest credentials.
 */
export function applyViewerNetworkRules(prev: GuestState, next: GuestState): GuestState {
  const hadWg = prev.interfaces.includes(WIREGUARD_INTERFACE);
  const hasWg = next.interfaces.includes(WIREGUARD_INTERFACE);
  const rdp = next.viewers.filter((v) => RDP_VIEWER_KEYS.includes(v));
  if (hadWg && !hasWg) {
    if (rdp.length === 0 && !prev.viewers.some((v) => RDP_VIEWER_KEYS.includes(v))) return next;
    return {
      interfaces: next.interfaces,
      viewers: next.viewers.filter((v) => !RDP_VIEWER_KEYS.includes(v)),
      credentials: { ...DEFAULT_GUEST_CREDENTIALS },
    };
  }
  if (rdp.length > 0 && !hasWg) return { ...next, interfaces: [...next.interfaces, WIREGUARD_INTERFACE] };
  return next;
}

/** "Only GPU" works only with RDP viewers. */
export const gpuOnlyViewersOk = (videos: readonly string[], viewers: readonly TGuestViewerKey[]) =>
  !videos.includes(GPU_ONLY_VIDEO) || viewers.every((v) => RDP_VIEWER_KEYS.includes(v));

/** Desktops without a GPU get the default video. */
export const videosFor = (vgpus: readonly string[] | null | undefined, videos: readonly string[]) =>
  vgpus && vgpus.length > 0 ? [...videos] : [DEFAULT_VIDEO];
