import { keepBrowserClipboard } from './toolbar/adapter';

// The RDP viewer's clipboard. IronRDP's web component reads and writes the page's clipboard itself
// (navigator.clipboard), which a browser allows only now and then (a secure page, a permission, the
// window focused). So the page puts a stand-in in front of it once, before the component starts:
// what the desktop copies is also told to the toolbar's clipboard panel, and the panel's text is
// what the component reads while it is set (until the window is left and entered again: the
// person may have copied something else meanwhile), then the browser's own clipboard again.

type Listener = (text: string) => void;
const listeners = new Set<Listener>();
let pending: string | null = null;
let installed = false;

/** Tells `fn` each text the desktop puts on the clipboard; answers the unsubscribe. */
export function onDesktopClipboard(fn: Listener) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** The text the component reads as the page's clipboard until the window is entered again. */
export function setPageClipboard(text: string) {
  pending = text;
}

const textItem = (text: string) => new ClipboardItem({ 'text/plain': new Blob([text], { type: 'text/plain' }) });

async function textOf(items: ClipboardItems): Promise<string | null> {
  for (const item of items) {
    if (item.types.includes('text/plain')) return (await item.getType('text/plain')).text();
  }
  return null;
}

/** Installs the stand-in (once; where the page may use the clipboard at all: a secure context). */
export function installRdpClipboard() {
  if (installed || !window.isSecureContext || typeof ClipboardItem === 'undefined') return;
  installed = true;
  const real = navigator.clipboard as Clipboard | undefined;
  keepBrowserClipboard(real);
  const tell = (text: string) => listeners.forEach((fn) => fn(text));
  const stand: Partial<Clipboard> = {
    read: async () => (pending !== null ? [textItem(pending)] : real?.read ? real.read() : []),
    readText: async () => (pending !== null ? pending : real?.readText ? real.readText() : ''),
    write: async (items: ClipboardItems) => {
      const text = await textOf(items);
      if (text !== null) tell(text);
      await real?.write?.(items).catch(() => undefined);
    },
    writeText: async (text: string) => {
      tell(text);
      await real?.writeText?.(text).catch(() => undefined);
    },
    addEventListener: (...args: Parameters<Clipboard['addEventListener']>) => real?.addEventListener(...args),
    removeEventListener: (...args: Parameters<Clipboard['removeEventListener']>) => real?.removeEventListener(...args),
    dispatchEvent: (e: Event) => real?.dispatchEvent(e) ?? false,
  };
  Object.defineProperty(navigator, 'clipboard', { configurable: true, get: () => stand });
  window.addEventListener('blur', () => {
    const onFocus = () => {
      pending = null;
    };
    window.addEventListener('focus', onFocus, { once: true });
  });
}

/** Whether this page can carry the RDP clipboard (IronRDP needs a secure page). */
export const rdpClipboardPossible = () => window.isSecureContext && typeof ClipboardItem !== 'undefined';

/**
 * Resolves once the component has set its clipboard up. It dispatches `ready` first and only then
 * asks the browser about the clipboard (a permission query), registering its clipboard with the
 * session at connect: a connect right at `ready` has none. Our own query, asked after its own,
 * answers after it (the browser answers them in order); a bound keeps a browser that never answers from holding the connection.
 */
export async function clipboardSettled() {
  await new Promise((r) => setTimeout(r, 0));
  await Promise.race([
    navigator.permissions?.query({ name: 'clipboard-read' as PermissionName }).catch(() => undefined),
    new Promise((r) => setTimeout(r, 1000)),
  ]);
  await new Promise((r) => setTimeout(r, 20));
}
