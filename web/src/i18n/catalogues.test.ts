import { describe, expect, it } from 'vitest';
import { DESCRIPTION_CODES, INTERFACE_LANGUAGES } from '@vdi/contracts';
import { catalogues, pickLanguage } from '.';

type Tree = { [k: string]: string | Tree };
const flatten = (o: Tree, prefix = ''): Record<string, string> =>
  Object.entries(o).reduce<Record<string, string>>((acc, [k, v]) => {
    if (typeof v === 'string') acc[prefix + k] = v;
    else Object.assign(acc, flatten(v, `${prefix}${k}.`));
    return acc;
  }, {});
const placeholders = (s: string) => [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

const en = flatten(catalogues['en-US'] as unknown as Tree);

describe('translation catalogues', () => {
  for (const lang of INTERFACE_LANGUAGES) {
    it(`${lang} has every key of English, non-empty, with the same placeholders`, () => {
      const cat = flatten(catalogues[lang] as unknown as Tree);
      for (const [key, value] of Object.entries(en)) {
        expect(cat[key], `${lang} misses ${key}`).toBeTruthy();
        expect(placeholders(cat[key]!), `${lang} ${key}`).toEqual(placeholders(value));
      }
    });
  }

  it('translates every description code the server may answer', () => {
    for (const code of DESCRIPTION_CODES) expect(en[`errors.${code}`], code).toBeTruthy();
  });

  it('has a title for every route', async () => {
    const { ROUTES } = await import('../app/routes');
    for (const r of ROUTES) expect(en[r.title], r.title).toBeTruthy();
  });
});

describe('language choice', () => {
  it('prefers the stored choice, then the browser, then English', () => {
    expect(pickLanguage('ca', ['fr-FR'])).toBe('ca-ES');
    expect(pickLanguage(null, ['de-DE', 'eu'])).toBe('eu-ES');
    expect(pickLanguage(undefined, ['de-DE'])).toBe('en-US');
    expect(pickLanguage('xx', [])).toBe('en-US');
  });
});
