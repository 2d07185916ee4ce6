import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { IMAGE_UPLOAD_MAX_BYTES, type TDesktopImageChoice } from '@vdi/contracts';
import type { AppContext } from '../../context';
import type { DomainImage } from '../../db/schema';
import { badRequest, notFound } from '../../http/errors';

/** The stock covers (stock/<n>.svg): a gradient and an icon each. */
const STOCK_NAMES = ['Desktop', 'Terminal', 'Code', 'Web', 'Science', 'Books', 'Data', 'Design', 'Hardware', 'Cloud', '3D', 'Media'];
const STOCK_DIR = join(import.meta.dirname, 'stock');
export const STOCK_URL = '/assets/img/desktops/stock';
export const USER_URL = '/assets/img/desktops/user';

export const stockImages = (): TDesktopImageChoice[] =>
  STOCK_NAMES.map((name, i) => ({ id: `${i + 1}.svg`, type: 'stock' as const, url: `${STOCK_URL}/${i + 1}.svg`, name }));

/** A stock id as stored: `<n>.svg`, or the `<n>.jpg` / `<n>.png` of older records. */
export function stockNumber(id: string): number | null {
  const m = /^(\d{1,3})\.(svg|jpg|png)$/.exec(id);
  const n = m ? Number(m[1]) : NaN;
  return n >= 1 && n <= STOCK_NAMES.length ? n : null;
}

export function stockImage(id: string): DomainImage {
  const n = stockNumber(id);
  if (n === null) throw badRequest('bad_request', `No stock image ${id}`, { image: id });
  return { id: `${n}.svg`, type: 'stock', url: `${STOCK_URL}/${n}.svg` };
}

export const userImagesDir = (dataDir: string) => join(dataDir, 'images', 'desktops');
const USER_FILE = /^[A-Za-z0-9-]{1,80}\.(png|jpg|gif|webp)$/;
const MIME: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' };

/** The kind of picture by its first bytes (never by its name). */
function sniff(b: Buffer): 'png' | 'jpg' | 'gif' | 'webp' | null {
  if (b.length > 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (b.length > 6 && (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'gif';
  if (b.length > 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return null;
}

/** Stores an uploaded cover (≤ 1 MB; PNG, JPEG, GIF or WebP) and answers the image record. */
export async function saveUserImage(dataDir: string, domainId: string, data: string): Promise<DomainImage> {
  const base64 = data.replace(/^data:[^,]*,/, '');
  if (!/^[A-Za-z0-9+/=\s]*$/.test(base64)) throw badRequest('image_bad_format', 'The image is not base64');
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > IMAGE_UPLOAD_MAX_BYTES) throw badRequest('image_too_large', 'The image is larger than 1 MB', { max_bytes: IMAGE_UPLOAD_MAX_BYTES });
  const ext = sniff(bytes);
  if (!ext) throw badRequest('image_bad_format', 'Only PNG, JPEG, GIF or WebP images');
  const dir = userImagesDir(dataDir);
  await mkdir(dir, { recursive: true });
  const file = `${domainId.replace(/[^A-Za-z0-9-]/g, '').slice(0, 64)}-${randomBytes(6).toString('hex')}.${ext}`;
  await writeFile(join(dir, file), bytes, { mode: 0o644 });
  return { id: file, type: 'user', url: `${USER_URL}/${file}` };
}

/** Removes a replaced upload (stock covers are shared and stay). */
export async function removeUserImage(dataDir: string, image: DomainImage) {
  if (image.type !== 'user' || !USER_FILE.test(image.id)) return;
  await rm(join(userImagesDir(dataDir), image.id), { force: true });
}

/** The covers, outside /api/v3 like the original static host: /assets/img/desktops/{stock,user}/… */
export async function desktopImageRoutes(app: FastifyInstance, ctx: AppContext) {
  const stock = new Map<number, Buffer>();
  for (let n = 1; n <= STOCK_NAMES.length; n++) {
    const p = join(STOCK_DIR, `${n}.svg`);
    if (existsSync(p)) stock.set(n, readFileSync(p));
  }
  app.get<{ Params: { file: string } }>(`${STOCK_URL}/:file`, async (request, reply) => {
    const n = stockNumber(request.params.file);
    const svg = n === null ? undefined : stock.get(n);
    if (!svg) throw notFound('not_found', 'No such image');
    return reply.type(MIME.svg!).header('cache-control', 'public, max-age=86400').send(svg);
  });
  app.get<{ Params: { file: string } }>(`${USER_URL}/:file`, async (request, reply) => {
    const { file } = request.params;
    if (!USER_FILE.test(file)) throw notFound('not_found', 'No such image');
    const bytes = await readFile(join(userImagesDir(ctx.config.dataDir), file)).catch(() => null);
    if (!bytes) throw notFound('not_found', 'No such image');
    return reply
      .type(MIME[file.split('.').pop()!]!)
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(bytes);
  });
}
