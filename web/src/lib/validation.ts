import type { TFunction } from 'i18next';

/** Form rules with the spec's messages (each length message shows the current length and the bound). */
export const rules = (t: TFunction) => ({
  required: (v: string) => (v.trim() ? null : t('forms.required')),
  minLength: (min: number) => (v: string) => (v.length >= min ? null : t('forms.min_length', { min, length: v.length })),
  maxLength: (max: number) => (v: string) => (v.length <= max ? null : t('forms.max_length', { max, length: v.length })),
  inputFormat: (v: string) => (/^[\p{L}\p{N} ,._-]*$/u.test(v) ? null : t('forms.input_format')),
  sameAs: (other: string) => (v: string) => (v === other ? null : t('forms.same_as')),
  email: (v: string) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? null : t('forms.email')),
  url: (v: string) => {
    try {
      new URL(v);
      return null;
    } catch {
      return t('forms.url');
    }
  },
  urlPrefix: (host: string) => (v: string) => (v.startsWith(host) ? null : t('forms.url_prefix', { host })),
  all:
    (...checks: ((v: string) => string | null)[]) =>
    (v: string) => {
      for (const c of checks) {
        const r = c(v);
        if (r) return r;
      }
      return null;
    },
});

export const LOCAL_DATE_TIME = 'YYYY-MM-DD HH:mm';
