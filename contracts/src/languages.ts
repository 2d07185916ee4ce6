import { z } from 'zod';

/** Languages offered in the interface (spec 001 §9). */
export const INTERFACE_LANGUAGES = ['en-US', 'ca-ES', 'es-ES', 'eu-ES', 'fr-FR'] as const;
export const ZInterfaceLanguage = z.enum(INTERFACE_LANGUAGES);
export type TInterfaceLanguage = z.infer<typeof ZInterfaceLanguage>;

/** The short code stored on the user (the original system stores `es`, `ca`, …). */
export const languageShortCode = (lang: TInterfaceLanguage): string => lang.slice(0, 2);

/** Accepts `es`, `es-ES`, `es_ES`; answers the interface language or null. */
export function toInterfaceLanguage(value: string | null | undefined): TInterfaceLanguage | null {
  if (!value) return null;
  const short = value.slice(0, 2).toLowerCase();
  return INTERFACE_LANGUAGES.find((l) => l.startsWith(short)) ?? null;
}
