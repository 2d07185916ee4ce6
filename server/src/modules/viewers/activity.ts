/**
 * Viewers open now, per desktop (browser VNC bridges and SPICE tunnels of this process), and when
 * the last one closed: what the temporary-desktop inactivity limit counts from.
 */
const open = new Map<string, number>();
const lastClosed = new Map<string, number>();

export function viewerOpened(desktopId: string) {
  open.set(desktopId, (open.get(desktopId) ?? 0) + 1);
}

export function viewerClosed(desktopId: string, now = Date.now()) {
  const n = (open.get(desktopId) ?? 1) - 1;
  if (n > 0) open.set(desktopId, n);
  else open.delete(desktopId);
  lastClosed.set(desktopId, now);
}

export const viewersOpen = (desktopId: string) => open.get(desktopId) ?? 0;
export const lastViewerClosed = (desktopId: string) => lastClosed.get(desktopId);
export function forgetViewers(desktopId: string) {
  open.delete(desktopId);
  lastClosed.delete(desktopId);
}
