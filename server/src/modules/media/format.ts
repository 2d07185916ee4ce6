import { open, stat } from 'node:fs/promises';
import type { TMediaKind } from '@vdi/contracts';

/** Sizes of the usual floppy images (160 KB … 2.88 MB). */
export const FLOPPY_SIZES = [163_840, 184_320, 327_680, 368_640, 737_280, 1_228_800, 1_474_560, 1_720_320, 2_949_120];

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, position);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** ISO 9660: the primary volume descriptor at sector 16 begins with type 1 and "CD001". */
export async function isIso9660(path: string): Promise<boolean> {
  const head = await readAt(path, 32_768, 6);
  return head.length === 6 && head.subarray(1, 6).toString('latin1') === 'CD001';
}

/** A FAT boot sector: the 0x55AA signature and a sane BIOS parameter block (sector size, FAT count). */
export function looksLikeFatBootSector(sector: Buffer): boolean {
  if (sector.length < 512 || sector[510] !== 0x55 || sector[511] !== 0xaa) return false;
  const bytesPerSector = sector.readUInt16LE(11);
  const sectorsPerCluster = sector[13]!;
  const fats = sector[16]!;
  const jump = sector[0] === 0xeb || sector[0] === 0xe9;
  return jump && [512, 1024, 2048, 4096].includes(bytesPerSector) && sectorsPerCluster > 0 && (sectorsPerCluster & (sectorsPerCluster - 1)) === 0 && fats >= 1 && fats <= 2;
}

/** Whether a downloaded file is what its kind says: an ISO 9660 image, or a floppy image. */
export async function hasMediaFormat(path: string, kind: TMediaKind): Promise<boolean> {
  if (kind === 'iso') return isIso9660(path);
  const { size } = await stat(path);
  if (FLOPPY_SIZES.includes(size)) return true;
  if (size > 2_949_120 || size < 512) return false;
  return looksLikeFatBootSector(await readAt(path, 0, 512));
}
