import { useEffect, useState, type RefObject } from 'react';

/** A pixel brighter than this (sum of red, green and blue) means the guest has drawn something. */
const LIT = 60;

/** How often the screen is looked at: the "is booting" overlay goes within this of the guest's first drawing (a small probe: about a millisecond). */
export const BLANK_LOOK_MS = 200;

/**
 * Whether the screen drawn inside `container` is still all black, looked at as soon as `active`
 * (connected) and then every BLANK_LOOK_MS: a guest that is still booting sends a black screen, which
 * a person takes for a broken viewer. Stops looking at the first lit pixel.
 */
export function useBlankScreen(container: RefObject<HTMLElement | null>, active: boolean): boolean {
  const [blank, setBlank] = useState(true);
  useEffect(() => {
    if (!active) {
      setBlank(true);
      return;
    }
    const probe = document.createElement('canvas');
    probe.width = 160;
    probe.height = 120;
    const g = probe.getContext('2d', { willReadFrequently: true });
    const look = () => {
      const c = container.current?.querySelector('canvas');
      if (!c || !g || !c.width || !c.height) return;
      g.drawImage(c, 0, 0, probe.width, probe.height);
      const d = g.getImageData(0, 0, probe.width, probe.height).data;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i]! + d[i + 1]! + d[i + 2]! > LIT) {
          setBlank(false);
          clearInterval(timer);
          return;
        }
      }
    };
    const timer = setInterval(look, BLANK_LOOK_MS);
    look();
    return () => clearInterval(timer);
  }, [container, active]);
  return blank;
}
