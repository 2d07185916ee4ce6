import { useCallback, useEffect, useState } from 'react';

// What a browser viewer (VNC or RDP) can do, told to the one toolbar both share: each viewer page
// builds an adapter from its connection, and the toolbar shows what the adapter offers.

/** How the remote screen fits the window: scaled to fit, at its own size (100 %), or the desktop resized to the window. */
export type ScaleMode = 'fit' | 'real' | 'remote';
export const SCALE_MODES: readonly ScaleMode[] = ['fit', 'real', 'remote'];

/** The keys a browser keeps for itself, sent to the desktop from the toolbar. */
export type SpecialKey = 'ctrl-alt-del' | 'win' | `ctrl-alt-f${number}`;
export const FUNCTION_KEYS = Array.from({ length: 12 }, (_, i) => i + 1);

/** How key presses reach an RDP desktop: as key positions (the desktop's own layout applies) or as the characters typed here. */
export type KeyboardMode = 'scancode' | 'unicode';

export interface ViewerAdapter {
  /** The protocol, for the texts that differ. */
  protocol: 'vnc' | 'rdp';
  /** Sends a special key combination. */
  sendKey(key: SpecialKey): void;
  /** The scale modes the protocol allows, the one in use, and the change. */
  scale: { modes: readonly ScaleMode[]; mode: ScaleMode; set(mode: ScaleMode): void };
  /** The desktop's clipboard: null when this connection cannot carry it (`clipboardUnavailable` says why: a text key). */
  clipboard: {
    /** The last text the desktop put on its clipboard. */
    fromDesktop: string | null;
    /** Puts text on the desktop's clipboard. */
    toDesktop(text: string): Promise<void>;
  } | null;
  clipboardUnavailable?: string;
  /** A keyboard layout choice, where the protocol needs one (RDP sends key positions). */
  keyboard?: { mode: KeyboardMode; set(mode: KeyboardMode): void };
}

/** A choice kept in the browser (per protocol), read once when the page opens. */
export function useStoredChoice<T extends string>(key: string, allowed: readonly T[], fallback: T): [T, (v: T) => void] {
  const [value, setValue] = useState<T>(() => {
    try {
      const v = localStorage.getItem(key) as T | null;
      return v && allowed.includes(v) ? v : fallback;
    } catch {
      return fallback;
    }
  });
  const set = useCallback(
    (v: T) => {
      setValue(v);
      try {
        localStorage.setItem(key, v);
      } catch {
        /* private mode: the choice lasts the page */
      }
    },
    [key],
  );
  return [value, set];
}

/** How often the round trip is measured while connected. */
export const LATENCY_EVERY_MS = 5000;
/** The portal's health: no database, no session, not logged (HEAD: no body). */
const LATENCY_URL = '/api/v3/health';

/** Round trip in ms at or above which the indicator turns orange, then red. */
export const LATENCY_SLOW_MS = 150;
export const LATENCY_BAD_MS = 400;

/**
 * The measured round trip to the portal (which relays the viewer's connection): a small request
 * every few seconds while `active` and the tab is shown; null until the first answer or when it failed.
 */
export function useLatency(active: boolean): number | null {
  const [ms, setMs] = useState<number | null>(null);
  useEffect(() => {
    if (!active) {
      setMs(null);
      return;
    }
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const measure = async () => {
      if (document.visibilityState === 'visible') {
        const started = performance.now();
        try {
          const res = await fetch(LATENCY_URL, { method: 'HEAD', cache: 'no-store' });
          if (!stopped) setMs(res.ok ? Math.max(1, Math.round(performance.now() - started)) : null);
        } catch {
          if (!stopped) setMs(null);
        }
      }
      if (!stopped) timer = setTimeout(() => void measure(), LATENCY_EVERY_MS);
    };
    void measure();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active]);
  return ms;
}

/** The indicator's colour for a round trip. */
export function latencyColor(ms: number | null): string {
  if (ms === null) return 'gray';
  return ms >= LATENCY_BAD_MS ? 'red' : ms >= LATENCY_SLOW_MS ? 'orange' : 'teal';
}

/** The browser's own clipboard, kept when a viewer puts a stand-in in front of it (the RDP viewer does). */
let browserClipboard: Clipboard | undefined;
export const browserClipboardApi = (): Clipboard | undefined => browserClipboard ?? navigator.clipboard;
export function keepBrowserClipboard(c: Clipboard | undefined) {
  browserClipboard = c;
}
