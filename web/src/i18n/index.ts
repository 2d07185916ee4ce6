import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { INTERFACE_LANGUAGES, toInterfaceLanguage, type TInterfaceLanguage } from '@vdi/contracts';
import en from './locales/en.json';
import ca from './locales/ca.json';
import es from './locales/es.json';
import eu from './locales/eu.json';
import fr from './locales/fr.json';
// Feature catalogues: their own top-level sections, kept in their own files so areas grow apart.
import deploymentsEn from './locales/deployments/en.json';
import deploymentsCa from './locales/deployments/ca.json';
import deploymentsEs from './locales/deployments/es.json';
import deploymentsEu from './locales/deployments/eu.json';
import deploymentsFr from './locales/deployments/fr.json';
import bookingsEn from './locales/bookings/en.json';
import bookingsCa from './locales/bookings/ca.json';
import bookingsEs from './locales/bookings/es.json';
import bookingsEu from './locales/bookings/eu.json';
import bookingsFr from './locales/bookings/fr.json';

type Catalogue = typeof en & typeof deploymentsEn & typeof bookingsEn;

export const catalogues: Record<TInterfaceLanguage, Catalogue> = {
  'en-US': { ...en, ...deploymentsEn, ...bookingsEn },
  'ca-ES': { ...ca, ...deploymentsCa, ...bookingsCa },
  'es-ES': { ...es, ...deploymentsEs, ...bookingsEs },
  'eu-ES': { ...eu, ...deploymentsEu, ...bookingsEu },
  'fr-FR': { ...fr, ...deploymentsFr, ...bookingsFr },
};

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

void i18n.use(initReactI18next).init({
  resources: Object.fromEntries(INTERFACE_LANGUAGES.map((l) => [l, { translation: catalogues[l] }])),
  lng: typeof window === 'undefined' ? 'en-US' : initialLanguage(),
  fallbackLng: 'en-US',
  interpolation: { escapeValue: false },
  returnNull: false,
});

i18n.on('languageChanged', (lng) => {
  if (typeof document !== 'undefined') document.documentElement.lang = lng.slice(0, 2);
});

export default i18n;
