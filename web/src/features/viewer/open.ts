import type { TViewer, TViewerAnswer } from '@vdi/contracts';

type FileAnswer = Extract<TViewerAnswer, { kind: 'file' }>;
type BrowserAnswer = Extract<TViewerAnswer, { kind: 'browser' }>;

export const isBrowserViewer = (v: TViewer | string) => v.startsWith('browser-');

/** The page of a browser viewer, with its ticket in the fragment (never sent to a server or logged). */
export const browserViewerUrl = (a: BrowserAnswer) => `${a.viewer}#${a.cookie}`;

/** The file a file viewer answers (SPICE .vv, RDP .rdp): downloaded as name.ext. */
export function downloadViewerFile(a: FileAnswer) {
  const blob = new Blob([a.content], { type: a.mime || 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `${a.name}.${a.ext}`;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
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
