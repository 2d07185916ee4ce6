import { ZViewerAnswer, type TBrowserViewerTicket, type TRdpViewerTicket, type TViewer, type TViewerAnswer } from '@vdi/contracts';
import { api } from '../../lib/api';
import { downloadText } from '../../lib/download';
import { decodeRdpTicket, decodeTicket } from './ticket';

type FileAnswer = Extract<TViewerAnswer, { kind: 'file' }>;
type BrowserAnswer = Extract<TViewerAnswer, { kind: 'browser' }>;

export const isBrowserViewer = (v: TViewer | string) => v.startsWith('browser-');

/** The page of a browser viewer, with its ticket in the fragment (never sent to a server or logged). */
export const browserViewerUrl = (a: BrowserAnswer) => `${a.viewer}#${a.cookie}`;

/**
 * The name a viewer file is saved under: the desktop's name (characters file systems refuse replaced), and for the
 * RDP files, of which a desktop has two (through the gateway, through the VPN), their kind too.
 */
export function viewerFileName(a: Pick<FileAnswer, 'name' | 'ext' | 'protocol'>): string {
  // eslint-disable-next-line no-control-regex -- control characters are among those file systems refuse
  const base = a.name.replace(/[\u0000-\u001f/\\:*?"<>|]+/g, '_').trim() || 'desktop';
  return a.ext === 'rdp' ? `${base}-${a.protocol}.${a.ext}` : `${base}.${a.ext}`;
}

/** The file a file viewer answers (SPICE .vv, RDP .rdp), downloaded under `viewerFileName`. */
export function downloadViewerFile(a: FileAnswer) {
  downloadText(a.content, a.mime || 'application/octet-stream', viewerFileName(a));
}

/**
 * Asks for a viewer and uses its answer. For browser viewers a tab is opened at once, while the
 * click still counts as the person's gesture (popup blockers), and sent to the viewer when the
 * answer arrives; on failure it is closed again and the error is rethrown.
 */
export async function openViewer(kind: TViewer | string, fetchAnswer: () => Promise<TViewerAnswer>): Promise<TViewerAnswer> {
  const tab = isBrowserViewer(kind) ? window.open('', '_blank') : null;
  try {
    const answer = await fetchAnswer();
    if (answer.kind === 'file') {
      tab?.close();
      downloadViewerFile(answer);
    } else {
      const url = new URL(browserViewerUrl(answer), window.location.href).href;
      if (tab && !tab.closed) {
        tab.opener = null;
        tab.location.href = url;
      } else {
        window.open(url, '_blank', 'noopener');
      }
    }
    return answer;
  } catch (err) {
    tab?.close();
    throw err;
  }
}

/** A fresh one-time ticket for a desktop's screen in the browser (noVNC), or an error. */
export async function fetchVncTicket(desktopId: string): Promise<TBrowserViewerTicket> {
  const answer = await api.get(`/desktop/${encodeURIComponent(desktopId)}/viewer/browser-vnc`, ZViewerAnswer);
  const ticket = answer.kind === 'browser' ? decodeTicket(answer.cookie) : null;
  if (!ticket) throw new Error('No browser viewer ticket in the answer');
  return ticket;
}

/** A fresh one-time ticket for a desktop's browser RDP viewer, or an error. */
export async function fetchRdpTicket(desktopId: string): Promise<TRdpViewerTicket> {
  const answer = await api.get(`/desktop/${encodeURIComponent(desktopId)}/viewer/browser-rdp`, ZViewerAnswer);
  const ticket = answer.kind === 'browser' ? decodeRdpTicket(answer.cookie) : null;
  if (!ticket) throw new Error('No browser RDP ticket in the answer');
  return ticket;
}
