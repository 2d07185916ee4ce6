import i18n, { type BackendModule, type ResourceLanguage } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { INTERFACE_LANGUAGES, toInterfaceLanguage, type TInterfaceLanguage } from '@vdi/contracts';

/**
 * Catalogues load on demand, one file per language and area, each its own chunk of the build:
 * `locales/<lang>.json` (the core: shell, sign-in, every screen's common texts and the error codes)
 * for the active language before anything renders, and `locales/<area>/<lang>.json` (their own
 * top-level sections) when a module that shows them is loaded (see `loadArea`).
 */
const FILES = import.meta.glob<{ default: ResourceLanguage }>(['./locales/*.json', './locales/*/*.json']);

export const AREAS = ['deployments', 'bookings', 'admin', 'admin-system', 'account', 'vpn-bastion'] as const;
export type TArea = (typeof AREAS)[number];

const fileOf = (lang: TInterfaceLanguage, area?: TArea) => `./locales/${area ? `${area}/` : ''}${lang.slice(0, 2)}.json`;

const loaded = new Map<string, Promise<ResourceLanguage>>();
function loadFile(lang: TInterfaceLanguage, area?: TArea): Promise<ResourceLanguage> {
  const file = fileOf(lang, area);
  let p = loaded.get(file);
  if (!p) {
    const load = FILES[file];
    if (!load) return Promise.reject(new Error(`No catalogue ${file}`));
    p = load().then((m) => m.default);
    // A failed download (network) may be tried again later.
    p.catch(() => loaded.delete(file));
    loaded.set(file, p);
  }
  return p;
}

/** The areas opened so far: a language loaded later (a switch) comes with them. */
const openedAreas = new Set<TArea>();

/** One language's catalogue: the core and the given areas, merged (areas are their own top-level sections). */
export async function loadCatalogue(lang: TInterfaceLanguage, areas: Iterable<TArea> = AREAS): Promise<ResourceLanguage> {
  const parts = await Promise.all([loadFile(lang), ...[...areas].map((a) => loadFile(lang, a))]);
  return Object.assign({}, ...parts) as ResourceLanguage;
}

/** i18next loads each language it needs (the active one and the fallback) through this. */
const backend: BackendModule = {
  type: 'backend',
  init() {},
  read(language, _namespace, callback) {
    const lang = toInterfaceLanguage(language);
    if (!lang || lang !== language) return callback(null, {});
    withOpenedAreas(lang).then(
      (data) => callback(null, data),
      (err: Error) => callback(err, false),
    );
  },
};

/** A language's catalogue with every area opened so far, also those opened while it loaded. */
async function withOpenedAreas(lang: TInterfaceLanguage): Promise<ResourceLanguage> {
  for (;;) {
    const areas = [...openedAreas];
    const data = await loadCatalogue(lang, areas);
    if (openedAreas.size === areas.length) return data;
  }
}

/** Languages whose catalogue is loaded or being loaded: an area must reach each of them. */
const activeLanguages = (): TInterfaceLanguage[] => {
  const langs = new Set<string>([...Object.keys(i18n.store?.data ?? {}), i18n.language, ...(i18n.languages ?? []), 'en-US']);
  return INTERFACE_LANGUAGES.filter((l) => langs.has(l));
};

/**
 * Makes an area's texts available in the active and fallback languages (and in any language
 * loaded later). Modules that show them import the area's `texts.ts`, which awaits this, so
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

/** The stored preference first, then the browser's languages, English last (spec core §1). */
export function pickLanguage(stored: string | null | undefined, browser: readonly string[]): TInterfaceLanguage {
  return toInterfaceLanguage(stored) ?? browser.map((b) => toInterfaceLanguage(b)).find(Boolean) ?? 'en-US';
}

export function initialLanguage(): TInterfaceLanguage {
  return pickLanguage(localStorage.getItem(STORED_KEY), navigator.languages ?? [navigator.language]);
}

export function rememberLanguage(lang: TInterfaceLanguage) {
  localStorage.setItem(STORED_KEY, lang);
}

/** Resolves when the active language's core catalogue (with the error texts) is loaded. */
export const i18nReady = i18n
  .use(backend)
  .use(initReactI18next)
  .init({
    lng: typeof window === 'undefined' ? 'en-US' : initialLanguage(),
    fallbackLng: 'en-US',
    supportedLngs: [...INTERFACE_LANGUAGES],
    load: 'currentOnly',
    interpolation: { escapeValue: false },
    returnNull: false,
  });

i18n.on('languageChanged', (lng) => {
  if (typeof document !== 'undefined') document.documentElement.lang = lng.slice(0, 2);
});

export default i18n;
