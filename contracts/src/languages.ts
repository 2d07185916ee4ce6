import { z } from 'zod';

/**
 * Every language with a catalogue (spec 001 §9: ca, de, en, eo, es, eu, fr, hi (empty), ko, pl, ru,
 * zh_Hans). Each has the BCP 47 tag the interface uses (i18next, `Intl`, the `lang` attribute), the
 * code stored on the user and accepted by `PUT /user/language/{lang}` (the original's catalogue
 * names: `es`, `de`, `zh_Hans`, …) and the stem of its web catalogue files (`locales/<stem>.json`).
 * `interface`: one of the five the interface always offers (spec 001 §9); the others are offered
 * when their catalogue is complete (the web computes that from the catalogues themselves).
 */
export const LANGUAGES = [
  { tag: 'en-US', name: 'English', code: 'en', file: 'en', interface: true },
  { tag: 'ca-ES', name: 'Català', code: 'ca', file: 'ca', interface: true },
  { tag: 'es-ES', name: 'Español', code: 'es', file: 'es', interface: true },
  { tag: 'eu-ES', name: 'Euskara', code: 'eu', file: 'eu', interface: true },
  { tag: 'fr-FR', name: 'Français', code: 'fr', file: 'fr', interface: true },
  { tag: 'de-DE', name: 'Deutsch', code: 'de', file: 'de', interface: false },
  { tag: 'eo', name: 'Esperanto', code: 'eo', file: 'eo', interface: false },
  { tag: 'hi-IN', name: 'हिन्दी', code: 'hi', file: 'hi', interface: false },
  { tag: 'ko-KR', name: '한국어', code: 'ko', file: 'ko', interface: false },
  { tag: 'pl-PL', name: 'Polski', code: 'pl', file: 'pl', interface: false },
  { tag: 'ru-RU', name: 'Русский', code: 'ru', file: 'ru', interface: false },
  { tag: 'zh-Hans', name: '简体中文', code: 'zh_Hans', file: 'zh', interface: false },
] as const;

type TLanguageEntry = (typeof LANGUAGES)[number];
/** A language's interface tag (`de-DE`, `zh-Hans`). */
export type TLanguage = TLanguageEntry['tag'];
/** A language's stored code (`de`, `zh_Hans`). */
export type TLanguageCode = TLanguageEntry['code'];

export const LANGUAGE_TAGS = LANGUAGES.map((l) => l.tag) as TLanguage[];
export const LANGUAGE_CODES = LANGUAGES.map((l) => l.code) as TLanguageCode[];
export const ZLanguageCode = z.enum(LANGUAGE_CODES as [TLanguageCode, ...TLanguageCode[]]);

/** Languages offered in the interface whatever their catalogue (spec 001 §9). */
export const INTERFACE_LANGUAGES = ['en-US', 'ca-ES', 'es-ES', 'eu-ES', 'fr-FR'] as const satisfies readonly TLanguage[];
export const ZInterfaceLanguage = z.enum(INTERFACE_LANGUAGES);
export type TInterfaceLanguage = z.infer<typeof ZInterfaceLanguage>;

const byTag = new Map<string, TLanguageEntry>(LANGUAGES.map((l) => [l.tag, l]));

/** The stored code of a language (the original system stores `es`, `ca`, `zh_Hans`, …). */
export const languageCode = (tag: TLanguage): TLanguageCode => byTag.get(tag)!.code;
/** The stem of a language's web catalogue files. */
/** A language in itself (`Deutsch`, `简体中文`). */
export const languageName = (tag: TLanguage): string => byTag.get(tag)!.name;
export const languageFile = (tag: TLanguage): string => byTag.get(tag)!.file;
export const isInterfaceLanguage = (tag: TLanguage): tag is TInterfaceLanguage => byTag.get(tag)!.interface;

/** Chinese written in Traditional characters (by script or region): not the Simplified catalogue. */
const TRADITIONAL = /^zh[-_](hant|tw|hk|mo)\b/i;

/**
 * Reads a language as a user, a browser or the original's catalogue names write it: `de`, `de-DE`,
 * `de_AT`, `zh_Hans`, `zh-CN`, `zh-Hans-SG`, `EO`; answers its tag, or null for a language without
 * a catalogue (Traditional Chinese included).
 */
export function toLanguage(value: string | null | undefined): TLanguage | null {
  if (!value) return null;
  const v = value.trim();
  const primary = v.split(/[-_]/)[0]!.toLowerCase();
  if (primary === 'zh' && TRADITIONAL.test(v)) return null;
  return LANGUAGES.find((l) => l.code.split('_')[0] === primary)?.tag ?? null;
}

/** Like `toLanguage`, but only the five interface languages. */
export function toInterfaceLanguage(value: string | null | undefined): TInterfaceLanguage | null {
  const lang = toLanguage(value);
  return lang && isInterfaceLanguage(lang) ? lang : null;
}

/** The stored code of a language read leniently (see `toLanguage`); English when there is none. */
export const languageCodeOf = (value: string | null | undefined): TLanguageCode => {
  const lang = toLanguage(value);
  return lang ? languageCode(lang) : 'en';
};
