import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Plugin } from 'vite';
import { flatten, missingKeys, type Tree } from './src/i18n/completeness.ts';

const ID = 'virtual:vdi-catalogues';
const RESOLVED = `\0${ID}`;

/**
 * Reads the catalogues (`src/i18n/locales/<stem>.json` and `<area>/<stem>.json`) and answers the
 * stems of the complete ones (every English text, with its language's plural forms; see
 * `src/i18n/completeness.ts`): the app offers those besides the five interface languages.
 */
export function completeCatalogues(dir: string): string[] {
  const read = (file: string): Tree => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Tree) : {});
  const areas = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  const whole = (stem: string) => flatten(Object.assign({}, read(join(dir, `${stem}.json`)), ...areas.map((a) => read(join(dir, a, `${stem}.json`)))));
  const en = whole('en');
  const stems = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
  return stems.filter((stem) => missingKeys(en, whole(stem), stem).length === 0).sort();
}

/** The `virtual:vdi-catalogues` module: `COMPLETE`, the stems of the complete catalogues, computed when built. */
export function cataloguesPlugin(): Plugin {
  let dir = '';
  return {
    name: 'vdi:catalogues',
    configResolved(config) {
      dir = resolve(config.root, 'src/i18n/locales');
    },
    resolveId: (id) => (id === ID ? RESOLVED : undefined),
    load(id) {
      if (id !== RESOLVED) return undefined;
      return `export const COMPLETE = ${JSON.stringify(completeCatalogues(dir))};\n`;
    },
    // In development a changed catalogue may complete a language.
    handleHotUpdate({ file, server }) {
      if (!file.startsWith(dir)) return;
      const mod = server.moduleGraph.getModuleById(RESOLVED);
      if (mod) server.moduleGraph.invalidateModule(mod);
    },
  };
}
