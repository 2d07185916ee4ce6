import { z } from 'zod';

// Files to and from a running desktop, through QEMU's guest agent (the viewer toolbar's files panel):
// one transfer folder in the guest (the server's configuration), listed, written and read.

/** A file of the desktop's transfer folder. */
export const ZGuestFile = z.object({ name: z.string(), size: z.number().int().nonnegative(), modified: z.string() });
export type TGuestFile = z.infer<typeof ZGuestFile>;

/** GET /desktop/:id/files: the folder (its path in the guest), its files, the largest upload allowed. */
export const ZGuestFolder = z.object({ folder: z.string(), files: z.array(ZGuestFile), max_upload_bytes: z.number().int().positive() });
export type TGuestFolder = z.infer<typeof ZGuestFolder>;

/** PUT /desktop/:id/files/:name: what was written. */
export const ZGuestFileSent = z.object({ name: z.string(), size: z.number().int().nonnegative() });

/** A file name in the transfer folder: no path separators, not "." or "..", no control characters, at most 255 bytes. */
export function isGuestFileName(name: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  return name.length > 0 && new TextEncoder().encode(name).length <= 255 && !/[/\\\u0000-\u001f\u007f]/.test(name) && name !== '.' && name !== '..';
}
