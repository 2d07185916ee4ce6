/**
 * Whether a language's catalogue is complete: every text of English, non-empty, with the plural
 * forms its language needs. Used at build time (the `virtual:vdi-catalogues` module of
 * `web/catalogues-plugin.ts`, which tells the app the complete languages) and by the catalogue test.
 * No imports from the app: the Vite config loads this file.
 */

export type Tree = { [k: string]: string | Tree };

export const flatten = (o: Tree, prefix = ''): Record<string, string> =>
  Object.entries(o).reduce<Record<string, string>>((acc, [k, v]) => {
    if (typeof v === 'string') acc[prefix + k] = v;
    else if (v && typeof v === 'object') Object.assign(acc, flatten(v, `${prefix}${k}.`));
    return acc;
  }, {});

/** i18next's plural suffixes (`key_one`, `key_few`, …). */
export const PLURAL = /_(zero|one|two|few|many|other)$/;

/**
 * The plural keys of English: those with both `_one` and `_other` (a key merely ending in
 * `_other`, like the audit action `viewer.open_other`, is a text of its own).
 */
export const pluralBases = (en: Record<string, string>): Set<string> =>
  new Set(Object.keys(en).filter((k) => k.endsWith('_other') && `${k.slice(0, -'other'.length)}one` in en).map((k) => k.slice(0, -'_other'.length)));

/**
 * The plural categories a count shown by the portal can take in a language (CLDR via
 * `Intl.PluralRules`): those selected by some whole number up to 10,000 (Polish and Russian: one,
 * few, many, other; German: one, other; Korean and Chinese: other). French, Spanish and Catalan
 * also have `many`, for exact millions only; a catalogue without it uses its `other` form there
 * (see `fillPlurals`).
 */
export function neededPlurals(tag: string): string[] {
  const rules = new Intl.PluralRules(tag);
  const found = new Set<string>(['other']);
  for (let n = 0; n <= 10_000; n++) found.add(rules.select(n));
  return [...found].sort();
}

/** Copies a plural key's `other` form to the categories of the language it lacks (French millions). */
export function fillPlurals(tag: string, cat: Tree): Tree {
  const all = new Intl.PluralRules(tag).resolvedOptions().pluralCategories;
  const walk = (o: Tree) => {
    for (const [k, v] of Object.entries(o)) {
      if (typeof v !== 'string') walk(v);
      else if (k.endsWith('_other') && (k.slice(0, -'other'.length) + 'one' in o || !all.includes('one'))) {
        const base = k.slice(0, -'other'.length);
        for (const c of all) if (!(base + c in o)) o[base + c] = v;
      }
    }
  };
  walk(cat);
  return cat;
}

/** The English keys a catalogue in `tag` must have: plural keys with the categories of its own language. */
export function requiredKeys(en: Record<string, string>, tag: string): string[] {
  const needed = neededPlurals(tag);
  const bases = pluralBases(en);
  const keys = new Set<string>();
  for (const key of Object.keys(en)) {
    const m = PLURAL.exec(key);
    if (!m || !bases.has(key.slice(0, m.index))) keys.add(key);
    else for (const c of needed) keys.add(key.slice(0, m.index + 1) + c);
  }
  return [...keys];
}

/** What a catalogue lacks to be complete (missing or empty texts), against English. */
export function missingKeys(en: Record<string, string>, cat: Record<string, string>, tag: string): string[] {
  return requiredKeys(en, tag).filter((k) => !cat[k]?.trim());
}
