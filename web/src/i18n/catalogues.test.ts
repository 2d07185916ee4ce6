import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESCRIPTION_CODES, INTERFACE_LANGUAGES } from '@vdi/contracts';
import { AREAS, loadCatalogue, pickLanguage } from '.';

type Tree = { [k: string]: string | Tree };
const flatten = (o: Tree, prefix = ''): Record<string, string> =>
  Object.entries(o).reduce<Record<string, string>>((acc, [k, v]) => {
    if (typeof v === 'string') acc[prefix + k] = v;
    else Object.assign(acc, flatten(v, `${prefix}${k}.`));
    return acc;
  }, {});
const placeholders = (s: string) => [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

// Each language whole: its core and every area, as the app loads them.
const catalogues = {} as Record<string, Tree>;
let en: Record<string, string>;
beforeAll(async () => {
  for (const lang of INTERFACE_LANGUAGES) catalogues[lang] = (await loadCatalogue(lang)) as Tree;
  en = flatten(catalogues['en-US']!);
});

describe('translation catalogues', () => {
  for (const lang of INTERFACE_LANGUAGES) {
    it(`${lang} has every key of English, non-empty, with the same placeholders`, () => {
      const cat = flatten(catalogues[lang]!);
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

/** Every source file of the web app (not tests), relative to src/. */
const sources = (dir = join(import.meta.dirname, '..')): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));

describe('area catalogues', () => {
  it('are loaded by every module that shows their texts, before it shows them', () => {
    for (const area of AREAS) {
      // The top-level sections of the area's catalogue (bookings: bookings.*, planner.*).
      const sections = Object.keys(readJson(`locales/${area}/en.json`) as object);
      const usesArea = new RegExp(`['"\`](${sections.join('|')})\\.[a-z_$]`);
      for (const file of sources()) {
        const text = readFileSync(file, 'utf8');
        if (!usesArea.test(text) || file.endsWith(`${area}/texts.ts`)) continue;
        // An area `a-b` may live in features/a/b (admin-system: the admin console's system screens).
        const folder = (f: string) => file.includes(`/${f}/`) && text.includes(`'./texts'`);
        const loads = text.includes(`${area}/texts'`) || folder(area) || folder(area.replace('-', '/')) || text.includes(`loadArea('${area}')`);
        expect(loads, `${file} shows ${area} texts without importing ${area}/texts`).toBe(true);
      }
    }
  });

  it('are not in the core catalogues', () => {
    const core = readJson('locales/en.json') as object;
    for (const area of AREAS) for (const k of Object.keys(readJson(`locales/${area}/en.json`) as object)) expect(core).not.toHaveProperty(k);
  });
});

function readJson(rel: string): unknown {
  return JSON.parse(readFileSync(join(import.meta.dirname, rel), 'utf8'));
}
