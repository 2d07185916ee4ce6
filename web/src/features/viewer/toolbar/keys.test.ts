import { describe, expect, it } from 'vitest';
import type RFB from '@novnc/novnc';
import { applyVncScale, sendVncKey } from '../vnc-adapter';
import { latencyColor, LATENCY_BAD_MS, LATENCY_SLOW_MS } from './adapter';

/** A noVNC connection that records what it is asked. */
function fakeRfb() {
  const sent: [number, string | null, boolean | undefined][] = [];
  const rfb = {
    sent,
    cad: 0,
    sendKey: (keysym: number, code: string | null, down?: boolean) => sent.push([keysym, code, down]),
    sendCtrlAltDel() {
      this.cad++;
    },
    clipViewport: true,
    scaleViewport: false,
    resizeSession: false,
  };
  return rfb;
}

describe('the VNC viewer’s special keys', () => {
  it('presses Ctrl and Alt around a function key and lets them go in reverse', () => {
    const rfb = fakeRfb();
    sendVncKey(rfb as unknown as RFB, 'ctrl-alt-f7');
    expect(rfb.sent).toEqual([
      [0xffe3, 'ControlLeft', true],
      [0xffe9, 'AltLeft', true],
      [0xffc4, 'F7', undefined],
      [0xffe9, 'AltLeft', false],
      [0xffe3, 'ControlLeft', false],
    ]);
  });
  it('sends the Windows key as Super, Ctrl+Alt+Del as noVNC does, and nothing for an unknown key', () => {
    const rfb = fakeRfb();
    sendVncKey(rfb as unknown as RFB, 'win');
    sendVncKey(rfb as unknown as RFB, 'ctrl-alt-del');
    sendVncKey(rfb as unknown as RFB, 'ctrl-alt-f13');
    expect(rfb.sent).toEqual([[0xffeb, 'MetaLeft', undefined]]);
    expect(rfb.cad).toBe(1);
  });
  it('scales to fit, shows 100 %, or asks the server to resize', () => {
    const rfb = fakeRfb();
    applyVncScale(rfb as unknown as RFB, 'real');
    expect(rfb).toMatchObject({ clipViewport: false, scaleViewport: false, resizeSession: false });
    applyVncScale(rfb as unknown as RFB, 'remote');
    expect(rfb).toMatchObject({ scaleViewport: true, resizeSession: true });
    applyVncScale(rfb as unknown as RFB, 'fit');
    expect(rfb).toMatchObject({ scaleViewport: true, resizeSession: false });
  });
});

describe('the latency indicator', () => {
  it('is grey unmeasured, then teal, orange and red as the round trip grows', () => {
    expect(latencyColor(null)).toBe('gray');
    expect(latencyColor(20)).toBe('teal');
    expect(latencyColor(LATENCY_SLOW_MS)).toBe('orange');
    expect(latencyColor(LATENCY_BAD_MS)).toBe('red');
  });
});
