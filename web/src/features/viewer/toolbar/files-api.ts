import { ZApiErrorBody, ZGuestFolder, type TApiErrorBody, type TGuestFolder } from '@vdi/contracts';
import { API, HttpError, request } from '../../../lib/api';
import { session } from '../../../lib/session';
import { downloadText } from '../../../lib/download';

// The desktop's transfer folder (through its guest agent, on the server): listed, a file sent with its
// progress, a file fetched as a download. Every call carries the person's session (the viewer's
// ticket opens the screen only).

const base = (desktopId: string) => `${API}/desktop/${encodeURIComponent(desktopId)}/files`;

export const listGuestFiles = (desktopId: string): Promise<TGuestFolder> => request(base(desktopId), { timeoutMs: 40_000 }, ZGuestFolder);

/** PUT of the file's bytes, telling its progress (0..1); rejects with the server's HttpError. */
export function sendGuestFile(desktopId: string, file: File, onProgress: (share: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `${base(desktopId)}/${encodeURIComponent(file.name)}`);
    const token = session.token();
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let body: TApiErrorBody = { error: 'generic_error', msg: xhr.statusText, description_code: 'generic_error', description: '', params: null };
      try {
        const parsed = ZApiErrorBody.partial().safeParse(JSON.parse(xhr.responseText));
        if (parsed.success) body = { ...body, ...parsed.data };
      } catch {
        /* not the catalogue's body: the generic message */
      }
      reject(new HttpError(xhr.status, body, new Headers()));
    };
    xhr.onerror = () => reject(new Error('network'));
    xhr.send(file);
  });
}

/** Fetches the file and hands it to the browser as a download under its own name. */
export async function fetchGuestFile(desktopId: string, name: string): Promise<void> {
  const blob = await request<Blob>(`${base(desktopId)}/${encodeURIComponent(name)}`, { blob: true, timeoutMs: 10 * 60_000 });
  downloadText(blob, blob.type || 'application/octet-stream', name);
}

/** A size for people: bytes, kB, MB, GB in the page's language (steps of 1024, as file managers count: the 100 MB limit is 100 MB). */
export function sizeLabel(bytes: number, lang: string): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let value = bytes;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return new Intl.NumberFormat(lang, { style: 'unit', unit: units[i], unitDisplay: 'short', maximumFractionDigits: i === 0 ? 0 : 1 }).format(value);
}
