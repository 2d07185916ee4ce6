import { useEffect, useMemo, type RefObject } from 'react';
import type { UserInteraction } from '@devolutions/iron-remote-desktop';
import { desktopSizeFor } from './rdp-state';
import { rdpClipboardPossible, setPageClipboard } from './rdp-clipboard';
import { SCALE_MODES, useStoredChoice, type KeyboardMode, type ScaleMode, type SpecialKey, type ViewerAdapter } from './toolbar/adapter';
import '../../i18n/areas/viewer-toolbar';

// The RDP viewer's adapter for the toolbar: IronRDP sends key positions (scancodes: the desktop's
// own layout applies) or, on request, the characters typed (Unicode); it scales the picture or
// resizes the desktop to the window (display control); the clipboard goes through the page's
// stand-in (rdp-clipboard.ts).

/** IronRDP's scale values (the enum is declared, not exported as a value). */
const IRON_SCALE = { fit: 1, real: 3 } as const;
const KEYBOARD_MODES: readonly KeyboardMode[] = ['scancode', 'unicode'];

/** Presses the keys (by their `code`) on the session's canvas, then lets them go in reverse. */
function pressOnCanvas(element: HTMLElement, codes: { code: string; key: string }[]) {
  element.shadowRoot?.querySelector('canvas')?.focus();
  const mods = { ctrlKey: codes.some((c) => c.key === 'Control'), altKey: codes.some((c) => c.key === 'Alt'), bubbles: true };
  for (const c of codes) window.dispatchEvent(new KeyboardEvent('keydown', { ...c, ...mods }));
  for (const c of [...codes].reverse()) window.dispatchEvent(new KeyboardEvent('keyup', { ...c, ...mods }));
}

export function sendRdpKey(ui: UserInteraction, element: HTMLElement | null, key: SpecialKey) {
  if (key === 'ctrl-alt-del') return ui.ctrlAltDel();
  if (key === 'win') return ui.metaKey();
  const n = Number(key.slice('ctrl-alt-f'.length));
  if (!element || !(n >= 1 && n <= 12)) return;
  pressOnCanvas(element, [
    { code: 'ControlLeft', key: 'Control' },
    { code: 'AltLeft', key: 'Alt' },
    { code: `F${n}`, key: `F${n}` },
  ]);
}

export function useRdpAdapter(
  ui: RefObject<UserInteraction | null>,
  element: RefObject<HTMLElement | null>,
  screen: RefObject<HTMLDivElement | null>,
  connected: boolean,
  clipboard: string | null,
): ViewerAdapter {
  const [scale, setScale] = useStoredChoice<ScaleMode>('viewer.rdp.scale', SCALE_MODES, 'remote');
  const [keyboard, setKeyboard] = useStoredChoice<KeyboardMode>('viewer.rdp.keyboard', KEYBOARD_MODES, 'scancode');

  // The picture's scale; in 'remote' the desktop follows the window (display control), a moment after the last change.
  useEffect(() => {
    const u = ui.current;
    if (!connected || !u) return;
    try {
      u.setScale(scale === 'real' ? IRON_SCALE.real : IRON_SCALE.fit);
    } catch {
      /* not drawn yet */
    }
    if (scale !== 'remote') return;
    let t: ReturnType<typeof setTimeout> | undefined;
    const follow = () => {
      const host = screen.current;
      if (!host || !ui.current) return;
      const size = desktopSizeFor(host.clientWidth, host.clientHeight);
      try {
        ui.current.resize(size.width, size.height);
      } catch {
        /* the server does not resize: the picture is scaled */
      }
    };
    const onResize = () => {
      clearTimeout(t);
      t = setTimeout(follow, 500);
    };
    window.addEventListener('resize', onResize);
    return () => {
      clearTimeout(t);
      window.removeEventListener('resize', onResize);
    };
  }, [connected, scale, ui, screen]);

  useEffect(() => {
    if (!connected || !ui.current) return;
    try {
      ui.current.setKeyboardUnicodeMode(keyboard === 'unicode');
    } catch {
      /* not connected */
    }
  }, [connected, keyboard, ui]);

  const possible = rdpClipboardPossible();
  return useMemo<ViewerAdapter>(
    () => ({
      protocol: 'rdp',
      sendKey: (key) => {
        if (ui.current) sendRdpKey(ui.current, element.current, key);
      },
      scale: { modes: SCALE_MODES, mode: scale, set: setScale },
      keyboard: { mode: keyboard, set: setKeyboard },
      clipboard: possible
        ? {
            fromDesktop: clipboard,
            toDesktop: async (text) => {
              const u = ui.current;
              if (!u) throw new Error('not connected');
              setPageClipboard(text);
              await u.sendClipboardData();
            },
          }
        : null,
      clipboardUnavailable: possible ? undefined : 'viewer_toolbar.clipboard_needs_https',
    }),
    [ui, element, scale, setScale, keyboard, setKeyboard, clipboard, possible],
  );
}
