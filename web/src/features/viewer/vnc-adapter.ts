import { useEffect, useMemo, type RefObject } from 'react';
import type RFB from '@novnc/novnc';
import { SCALE_MODES, useStoredChoice, type ScaleMode, type SpecialKey, type ViewerAdapter } from './toolbar/adapter';
import '../../i18n/areas/viewer-toolbar';

// The VNC viewer's adapter for the toolbar: noVNC sends keysyms (the keyboard's characters, so no
// layout choice is needed), carries the clipboard as RFB cut text, scales the picture or asks the
// server to resize (SetDesktopSize, where the server supports it).

/** X keysyms of the keys sent. */
const XK = { Control_L: 0xffe3, Alt_L: 0xffe9, Super_L: 0xffeb, F1: 0xffbe } as const;

/** Presses and releases a special key combination on a noVNC connection. */
export function sendVncKey(rfb: RFB, key: SpecialKey) {
  if (key === 'ctrl-alt-del') return rfb.sendCtrlAltDel();
  if (key === 'win') return rfb.sendKey(XK.Super_L, 'MetaLeft');
  const n = Number(key.slice('ctrl-alt-f'.length));
  if (!(n >= 1 && n <= 12)) return;
  rfb.sendKey(XK.Control_L, 'ControlLeft', true);
  rfb.sendKey(XK.Alt_L, 'AltLeft', true);
  rfb.sendKey(XK.F1 + n - 1, `F${n}`);
  rfb.sendKey(XK.Alt_L, 'AltLeft', false);
  rfb.sendKey(XK.Control_L, 'ControlLeft', false);
}

/** Applies a scale mode to a noVNC connection. */
export function applyVncScale(rfb: RFB, mode: ScaleMode) {
  rfb.clipViewport = false;
  rfb.scaleViewport = mode !== 'real';
  rfb.resizeSession = mode === 'remote';
}

/** `carriesClipboard` false: the desktop's clipboard agent talks to SPICE, so VNC's cut text reaches nothing. */
export function useVncAdapter(rfbRef: RefObject<RFB | null>, connected: boolean, clipboard: string | null, carriesClipboard = true): ViewerAdapter {
  const [scale, setScale] = useStoredChoice<ScaleMode>('viewer.vnc.scale', SCALE_MODES, 'fit');
  useEffect(() => {
    if (connected && rfbRef.current) applyVncScale(rfbRef.current, scale);
  }, [connected, scale, rfbRef]);
  return useMemo<ViewerAdapter>(
    () => ({
      protocol: 'vnc',
      sendKey: (key) => {
        const rfb = rfbRef.current;
        if (!rfb) return;
        sendVncKey(rfb, key);
        rfb.focus();
      },
      scale: { modes: SCALE_MODES, mode: scale, set: setScale },
      clipboard: carriesClipboard
        ? {
            fromDesktop: clipboard,
            toDesktop: async (text) => {
              const rfb = rfbRef.current;
              if (!rfb) throw new Error('not connected');
              rfb.clipboardPasteFrom(text);
            },
          }
        : null,
      clipboardUnavailable: carriesClipboard ? undefined : 'viewer_toolbar.clipboard_spice',
    }),
    [rfbRef, scale, setScale, clipboard, carriesClipboard],
  );
}
