import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESCRIPTION_CODES, INTERFACE_LANGUAGES, LANGUAGES, type TLanguage } from '@vdi/contracts';
import { COMPLETE } from 'virtual:vdi-catalogues';
import { completeCatalogues } from '../../catalogues-plugin';
import { AREAS, loadCatalogue, OFFERED_LANGUAGES, pickLanguage, toOfferedLanguage } from '.';
import { flatten, missingKeys, neededPlurals, PLURAL, pluralBases, type Tree } from './completeness';

const placeholders = (s: string) => [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();
const tags = (s: string) => [...s.matchAll(/<\/?(\w+)\s*\/?>/g)].map((m) => m[0]).sort();

/** Spec 001 §9: every language has a catalogue, complete but hi (present and empty). */
const EMPTY: TLanguage[] = ['hi-IN'];
const MUST_BE_COMPLETE = LANGUAGES.map((l) => l.tag).filter((l) => !EMPTY.includes(l));

/** Proper names that stay as they are in every language. */
const PROPER_NAMES = new Set(['app.title']);
/** Values that are the same in every language: acronyms, protocol and product names, numbers with units, symbols. */
const NEUTRAL_VALUE = /^[\s\d\p{P}\p{S}]*$|^(?:[A-Z0-9][A-Z0-9]*[.]?(?:[ /+·:-]+|$))+$|^[\s\p{P}\p{S}]*(?:\{\{\w+\}\}[\s\p{P}\p{S}]*)+(?:[A-Za-z]{1,3}|vCPUs?|[A-Z]+(?: [A-Z]+)?)?$|^(?:iOS|macOS|Android|Linux|Windows|Virtio|Wireguard VPN|vCPUs?|Ctrl\+Alt\+Del|Videowall(?: · \{\{\w+\}\})?|h|min|s|ms)$/u;
/**
 * Words a language writes as English does (cognates): a text equal to English is otherwise an
 * untranslated one.
 */
const COGNATES: Partial<Record<TLanguage, string[]>> = {
  'de-DE': ['2. Name', 'Administrator', 'Bastion', 'Bastion: {{name}}', 'Browser (RDP)', 'Browser (VNC)', 'Code', 'Desktop', 'Desktop: {{name}}', 'Desktops', 'Details', 'Hardware', 'Host', 'Hypervisor', 'Information', 'Limit', 'Limits', 'Link', 'Live', 'Manager', 'Migration', 'Name', 'Offline', 'Online', 'Organisation', 'Port', 'Status', 'System', 'Text', 'Token', 'Web'],
  'pl-PL': ['Administrator', 'Bastion', 'Bastion: {{name}}', 'E-mail', 'Folder', 'Host', 'Limit', 'Link', 'Model', 'Port', 'System', 'Token'],
  'ca-ES': ['Categories', 'Categories: {{count}}', 'Error', 'Error {{code}}', 'General', 'Id', 'Model', 'No', 'Persistent', 'Port', 'Quota', 'Sessions', 'Text', 'Total: {{count}}', 'Visible', 'Web', '{{count}} categories'],
  'es-ES': ['Error', 'Error {{code}}', 'General', 'Hardware', 'Id', 'No', 'Roles', 'Token', 'Total: {{count}}', 'Visible', 'Web', '{{count}} roles'],
  'fr-FR': ['Actions', 'Active', 'Administration', 'Bastion', 'Code', 'Danger', 'Description', 'E-mail', 'Information', 'Maintenance', 'Migration', 'Options', 'Organisation', 'Organisations', 'Port', 'Quota', 'Sessions', 'Type', 'Visible', 'Web'],
};

const allowedSame = (lang: TLanguage, key: string, value: string) => NEUTRAL_VALUE.test(value.trim()) || PROPER_NAMES.has(key) || Boolean(COGNATES[lang]?.includes(value));

const LOCALES = join(import.meta.dirname, 'locales');
const fileExists = (tag: TLanguage) => existsSync(join(LOCALES, `${LANGUAGES.find((l) => l.tag === tag)!.file}.json`));

// Each language whole: its core and every area, as the app loads them.
const catalogues = {} as Record<string, Record<string, string>>;
let en: Record<string, string>;
beforeAll(async () => {
  for (const { tag } of LANGUAGES) catalogues[tag] = flatten((await loadCatalogue(tag)) as Tree);
  en = catalogues['en-US']!;
});

/** The raw texts of a language (without the plural forms the loader fills in). */
const raw = (tag: TLanguage): Record<string, string> => {
  const file = LANGUAGES.find((l) => l.tag === tag)!.file;
  const read = (rel: string) => (existsSync(join(LOCALES, rel)) ? (JSON.parse(readFileSync(join(LOCALES, rel), 'utf8')) as Tree) : {});
  return flatten(Object.assign({}, read(`${file}.json`), ...AREAS.map((a) => read(`${a}/${file}.json`))));
};

describe('translation catalogues', () => {
  for (const lang of MUST_BE_COMPLETE) {
    it(`${lang} has every key of English, translated, with the same placeholders and markup`, () => {
      const cat = raw(lang);
      expect(missingKeys(raw('en-US'), cat, lang), `${lang} misses these texts`).toEqual([]);
      const untranslated: string[] = [];
      for (const [key, value] of Object.entries(cat)) {
        const english = en[key] ?? en[key.replace(PLURAL, '_other')];
        if (english === undefined) continue;
        expect(placeholders(value), `${lang} ${key}`).toEqual(placeholders(english));
        expect(tags(value), `${lang} ${key} markup`).toEqual(tags(english));
        if (lang !== 'en-US' && value === english && !allowedSame(lang, key, value)) untranslated.push(key);
      }
      expect(untranslated, `${lang}: the same as English (untranslated?)`).toEqual([]);
    });

    it(`${lang} has the plural forms of its language, and only those`, () => {
      const needed = neededPlurals(lang);
      const possible = new Set(new Intl.PluralRules(lang).resolvedOptions().pluralCategories);
      const cat = raw(lang);
      const bases = pluralBases(en);
      for (const base of bases) for (const c of needed) expect(cat[`${base}_${c}`], `${lang} ${base}_${c}`).toBeTruthy();
      for (const key of Object.keys(cat)) {
        const m = PLURAL.exec(key);
        if (m && bases.has(key.slice(0, m.index))) expect(possible.has(m[1] as Intl.LDMLPluralRule), `${lang} ${key}: not a plural form of ${lang}`).toBe(true);
      }
    });
  }

  it('knows the plural forms each language needs', () => {
    expect(neededPlurals('pl-PL')).toEqual(['few', 'many', 'one', 'other']);
    expect(neededPlurals('ru-RU')).toEqual(['few', 'many', 'one', 'other']);
    expect(neededPlurals('de-DE')).toEqual(['one', 'other']);
    expect(neededPlurals('eo')).toEqual(['one', 'other']);
    expect(neededPlurals('ko-KR')).toEqual(['other']);
    expect(neededPlurals('zh-Hans')).toEqual(['other']);
  });

  it('has hi present and empty (spec 001 §9)', () => {
    for (const rel of ['hi.json', ...AREAS.map((a) => `${a}/hi.json`)]) expect(JSON.parse(readFileSync(join(LOCALES, rel), 'utf8')), rel).toEqual({});
  });

  it('has no catalogue file for a language the portal does not know', () => {
    const stems = new Set(LANGUAGES.map((l) => l.file));
    for (const dir of ['.', ...AREAS]) for (const f of readdirSync(join(LOCALES, dir)).filter((f) => f.endsWith('.json'))) expect(stems, `${dir}/${f}`).toContain(f.slice(0, -5));
  });

  it('translates every description code the server may answer', () => {
    for (const code of DESCRIPTION_CODES) expect(en[`errors.${code}`], code).toBeTruthy();
    for (const lang of MUST_BE_COMPLETE.filter((l) => l !== 'en-US' && fileExists(l)))
      for (const code of DESCRIPTION_CODES) expect(catalogues[lang]![`errors.${code}`], `${lang} errors.${code}`).not.toBe(en[`errors.${code}`]);
  });

  it('has a title for every route', async () => {
    const { ROUTES } = await import('../app/routes');
    for (const r of ROUTES) expect(en[r.title], r.title).toBeTruthy();
  });

  it('has in English every key the code names', () => {
    const missing: string[] = [];
    for (const file of sources()) {
      const text = readFileSync(file, 'utf8');
      // t('a.b'), i18n.t("a.b"), i18nKey="a.b": literal keys only (a key built at run time is checked by its own test).
      for (const m of text.matchAll(/(?:\bt|i18n\.t)\(\s*(['"])([a-z0-9_]+(?:\.[A-Za-z0-9_-]+)+)\1|i18nKey=(['"])([a-z0-9_.]+)\3/g)) {
        const key = m[2] ?? m[4]!;
        const known = key in en || `${key}_other` in en || Object.keys(en).some((k) => k.startsWith(`${key}.`));
        if (!known) missing.push(`${file.slice(file.indexOf('/src/') + 1)}: ${key}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('language choice', () => {
  it('offers the five interface languages and every complete catalogue, no other', () => {
    expect(COMPLETE).toEqual(completeCatalogues(LOCALES));
    for (const l of INTERFACE_LANGUAGES) expect(OFFERED_LANGUAGES).toContain(l);
    for (const l of LANGUAGES) if (!l.interface) expect(OFFERED_LANGUAGES.includes(l.tag), l.tag).toBe(missingKeys(raw('en-US'), raw(l.tag), l.tag).length === 0);
    expect(OFFERED_LANGUAGES).toContain('de-DE');
    expect(OFFERED_LANGUAGES).toContain('pl-PL');
    expect(OFFERED_LANGUAGES).not.toContain('hi-IN');
  });

  it('prefers the stored choice, then the browser, then English', () => {
    expect(pickLanguage('ca', ['fr-FR'])).toBe('ca-ES');
    expect(pickLanguage(null, ['hi-IN', 'eu'])).toBe('eu-ES');
    expect(pickLanguage(null, ['de-AT', 'fr'])).toBe('de-DE');
    expect(pickLanguage(null, ['pl-PL'])).toBe('pl-PL');
    expect(pickLanguage(undefined, ['hi-IN'])).toBe('en-US');
    expect(pickLanguage('hi', ['hi'])).toBe('en-US');
    expect(pickLanguage('xx', [])).toBe('en-US');
    expect(toOfferedLanguage('zh-TW')).toBeNull();
  });

  it('an incomplete catalogue is not offered (English instead)', () => {
    const en = raw('en-US');
    const partial = Object.fromEntries(Object.entries(raw('de-DE')).slice(1));
    expect(missingKeys(en, partial, 'de-DE').length).toBeGreaterThan(0);
    // Polish with the English plural forms only (no few, many) is not complete.
    const plOnlyOneOther = Object.fromEntries(Object.entries(raw('pl-PL')).filter(([k]) => !/_(few|many)$/.test(k)));
    expect(missingKeys(en, plOnlyOneOther, 'pl-PL').length).toBeGreaterThan(0);
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
        if (!usesArea.test(text) || file.endsWith(`areas/${area}.ts`)) continue;
        // The console's own texts (admin.*) are loaded by its shell for every screen of a section area.
        const consoleScreen = area === 'admin' && file.includes('/features/admin/') && text.includes(`i18n/areas/admin`);
        const loads = text.includes(`i18n/areas/${area}'`) || text.includes(`loadArea('${area}')`) || consoleScreen;
        expect(loads, `${file} shows ${area} texts without importing i18n/areas/${area}`).toBe(true);
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
