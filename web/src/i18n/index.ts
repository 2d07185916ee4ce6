import i18n, { type BackendModule, type FormatterModule, type ResourceLanguage } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { COMPLETE } from 'virtual:vdi-catalogues';
import { LANGUAGE_TAGS, LANGUAGES, languageFile, toLanguage, type TLanguage } from '@vdi/contracts';
import { numberFormat } from './intl';
import { fillPlurals, type Tree } from './completeness';

/**
 * Catalogues load on demand, one file per language and area, each its own chunk of the build:
 * `locales/<lang>.json` (the core: shell, sign-in, every screen's common texts and the error codes)
 * for the active language before anything renders, and `locales/<area>/<lang>.json` (their own
 * top-level sections) when a module that shows them is loaded (see `loadArea`).
 */
const FILES = import.meta.glob<{ default: ResourceLanguage }>(['./locales/*.json', './locales/*/*.json']);

export const AREAS = ['deployments', 'bookings', 'admin', 'admin-system', 'account', 'admin-infra', 'admin-reserve', 'admin-desktops', 'vpn-bastion', 'viewer-toolbar', 'content', 'pools'] as const;
export type TArea = (typeof AREAS)[number];

const fileOf = (lang: TLanguage, area?: TArea) => `./locales/${area ? `${area}/` : ''}${languageFile(lang)}.json`;

/**
 * The languages the interface offers: the five of the spec, then every other language whose
 * catalogue is complete (computed from the catalogues when the app is built, see
 * `web/catalogues-plugin.ts`), marked as additional in the menus.
 */
export const OFFERED_LANGUAGES: readonly TLanguage[] = LANGUAGES.filter((l) => l.interface || COMPLETE.includes(l.file)).map((l) => l.tag);
export const isAdditionalLanguage = (lang: TLanguage) => !LANGUAGES.find((l) => l.tag === lang)!.interface;

/** A language as written anywhere (`de`, `pl-PL`, `zh_Hans`), when the interface offers it. */
export function toOfferedLanguage(value: string | null | undefined): TLanguage | null {
  const lang = toLanguage(value);
  return lang && OFFERED_LANGUAGES.includes(lang) ? lang : null;
}

const loaded = new Map<string, Promise<ResourceLanguage>>();
function loadFile(lang: TLanguage, area?: TArea): Promise<ResourceLanguage> {
  const file = fileOf(lang, area);
  let p = loaded.get(file);
  if (!p) {
    const load = FILES[file];
    // A language without this file (hi, present and empty) falls back to English for its texts.
    if (!load) return Promise.resolve({});
    p = load().then((m) => fillPlurals(lang, structuredClone(m.default) as Tree) as ResourceLanguage);
    // A failed download (network) may be tried again later.
    p.catch(() => loaded.delete(file));
    loaded.set(file, p);
  }
  return p;
}

/** The areas opened so far: a language loaded later (a switch) comes with them. */
const openedAreas = new Set<TArea>();

/** One language's catalogue: the core and the given areas, merged (areas are their own top-level sections). */
export async function loadCatalogue(lang: TLanguage, areas: Iterable<TArea> = AREAS): Promise<ResourceLanguage> {
  const parts = await Promise.all([loadFile(lang), ...[...areas].map((a) => loadFile(lang, a))]);
  return Object.assign({}, ...parts) as ResourceLanguage;
}

/** i18next loads each language it needs (the active one and the fallback) through this. */
const backend: BackendModule = {
  type: 'backend',
  init() {},
  read(language, _namespace, callback) {
    const lang = toLanguage(language);
    if (!lang || lang !== language) return callback(null, {});
    withOpenedAreas(lang).then(
      (data) => callback(null, data),
      (err: Error) => callback(err, false),
    );
  },
};

/** A language's catalogue with every area opened so far, also those opened while it loaded. */
async function withOpenedAreas(lang: TLanguage): Promise<ResourceLanguage> {
  for (;;) {
    const areas = [...openedAreas];
    const data = await loadCatalogue(lang, areas);
    if (openedAreas.size === areas.length) return data;
  }
}

/** Languages whose catalogue is loaded or being loaded: an area must reach each of them. */
const activeLanguages = (): TLanguage[] => {
  const langs = new Set<string>([...Object.keys(i18n.store?.data ?? {}), i18n.language, ...(i18n.languages ?? []), 'en-US']);
  return LANGUAGE_TAGS.filter((l) => langs.has(l));
};

/**
 * Makes an area's texts available in the active and fallback languages (and in any language
 * loaded later). Modules that show them import the area's `areas/<area>.ts`, which awaits this, so
 * the screen that contains them is not shown before its texts.
 */
export async function loadArea(area: TArea): Promise<void> {
  openedAreas.add(area);
  await Promise.all(
    activeLanguages().map(async (lang) => {
      const data = await loadFile(lang, area);
      i18n.addResourceBundle(lang, 'translation', data, true, true);
    }),
  );
}

const STORED_KEY = 'vdi.language';

/**
 * The stored preference first, then the browser's languages, English last (spec core §1); only
 * languages the interface offers (a browser in Hindi, whose catalogue is empty, gets English).
 */
export function pickLanguage(stored: string | null | undefined, browser: readonly string[]): TLanguage {
  return toOfferedLanguage(stored) ?? browser.map((b) => toOfferedLanguage(b)).find(Boolean) ?? 'en-US';
}

export function initialLanguage(): TLanguage {
  return pickLanguage(localStorage.getItem(STORED_KEY), navigator.languages ?? [navigator.language]);
}

export function rememberLanguage(lang: TLanguage) {
  localStorage.setItem(STORED_KEY, lang);
}

/** The signed-in user's language as last read from the server (its code), and how many choices are being saved. */
let serverLanguage: string | null | undefined;
let savingChoices = 0;

/**
 * The language saved on the server is the stored preference of a signed-in user: applied when the
 * server's value is new to this page (a sign-in, a first load, a change in another browser), before
 * the screen that follows shows (the access guard awaits it). A value read while a choice of this
 * page is being saved is older than that choice, and one already applied is not applied again, so
 * a choice made here is never undone by a late read.
 */
export async function applySavedLanguage(code: string | null | undefined): Promise<void> {
  if (savingChoices > 0 || code === serverLanguage) return;
  serverLanguage = code;
  const saved = toOfferedLanguage(code);
  if (saved && saved !== i18n.language) {
    rememberLanguage(saved);
    await i18n.changeLanguage(saved);
  }
}

/** Saves a choice of this page on the server (`save`), as the code the server then holds. */
export async function saveLanguageChoice(code: string, save: () => Promise<unknown>): Promise<void> {
  savingChoices++;
  try {
    await save();
    serverLanguage = code;
  } finally {
    savingChoices--;
  }
}

/**
 * Numbers in texts (`{{count}} desktops`, `{{memory}} GB`, `{{minutes}}`) are written the way the
 * active language writes them (`1,5`, `1 000`, `1.000`), with `Intl.NumberFormat`; everything else
 * is written as it is. The catalogues use no named formats.
 */
const numbers: FormatterModule = {
  type: 'formatter',
  init() {},
  add() {},
  addCached() {},
  // i18next types the answer as a string; anything not a number goes back untouched, as i18next would write it.
  format: (value: unknown, _format: string | undefined, lng: string | undefined) =>
    (typeof value === 'number' && Number.isFinite(value) ? numberFormat(lng ?? 'en-US').format(value) : value) as string,
};

/** Resolves when the active language's core catalogue (with the error texts) is loaded. */
export const i18nReady = i18n
  .use(backend)
  .use(numbers)
  .use(initReactI18next)
  .init({
    lng: typeof window === 'undefined' ? 'en-US' : initialLanguage(),
    fallbackLng: 'en-US',
    supportedLngs: [...LANGUAGE_TAGS],
    load: 'currentOnly',
    interpolation: { escapeValue: false, alwaysFormat: true },
    returnNull: false,
  });

i18n.on('languageChanged', (lng) => {
  if (typeof document !== 'undefined') document.documentElement.lang = lng;
});

export default i18n;
