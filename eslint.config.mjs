// ESLint (`npm run lint`, a step of `npm test`): the layers only look down, no import cycles, and the
// few rules the code names in its eslint-disable comments. Not type-aware: parsing only, to stay fast.
// The layers are ARCHITECTURE.md's "The layers, and the rule that keeps them"; `lintConfig(base)` builds the same rules for any tree
// laid out like this one (server/test/lint-rules.test.ts runs them on scripts/lint-fixtures/).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
// typescript-eslint parses with TypeScript's JavaScript API, which TypeScript 7 (the repo's `tsc`)
// no longer has: it comes with a TypeScript 6 of its own from the tools/lint workspace.
import { tseslint } from '@vdi/lint';

const SOURCES = ['contracts/src/**/*.{ts,tsx}', 'server/{src,test,bench}/**/*.{ts,tsx}', 'web/{src,e2e,tours}/**/*.{ts,tsx}'];
/** Tests and their helpers may import any layer: they stand above all of them. */
const TESTS = ['**/*.test.{ts,tsx}', '**/*.spec.ts', '**/*.suite.ts', 'server/test/**', 'server/bench/**', 'web/e2e/**', 'web/tours/**', 'web/src/test/**'];

const entries = (base, dir, wantDirs) =>
  existsSync(join(base, dir))
    ? readdirSync(join(base, dir), { withFileTypes: true })
        .filter((e) => (wantDirs ? e.isDirectory() : true))
        .map((e) => e.name)
    : [];

/** `import-x/no-restricted-paths` zones: a file under `target` may not import a file under `from`. */
export function layerZones(base) {
  const web = (p) => `web/src/${p}`;
  // Web: app (routes, guard, providers, the shell in layout/) → features/<area> → entities → lib, components.
  const webTop = ['main.tsx', 'app', 'layout'].map(web);
  const features = entries(base, 'web/src/features', true);
  // Server: app.ts, main.ts (serve.ts) and the seed compose everything → modules/<area> hold the rules → adapters.
  const serverTop = ['app.ts', 'main.ts', 'serve.ts', 'seed'].map((p) => `server/src/${p}`);
  const adapters = entries(base, 'server/src', false)
    .filter((n) => !['modules', 'seed', 'app.ts', 'main.ts', 'serve.ts'].includes(n) && !/\.test\.tsx?$/.test(n))
    .map((n) => `server/src/${n}`);
  return [
    {
      target: ['lib', 'components', 'i18n', 'styles'].map(web),
      from: [...webTop, web('features'), web('entities')],
      message: 'lib/, components/ and i18n/ are the web\'s bottom layer: they import no entities, features or app files.',
    },
    {
      target: web('entities'),
      from: [...webTop, web('features')],
      message: 'entities/ sits below the features: it imports no feature or app files (move the shared piece down to entities/ or lib/).',
    },
    {
      target: web('features'),
      from: webTop,
      message: 'A feature imports nothing of app/ or layout/: what it needs from there belongs in lib/ or entities/.',
    },
    ...features.map((f) => ({
      target: web(`features/${f}`),
      from: web('features'),
      except: [`./${f}`],
      message: `features/${f} imports no other feature's files: move what both need to entities/ (or lib/).`,
    })),
    {
      target: adapters,
      from: ['server/src/modules', ...serverTop],
      message: 'engine, db, network, mail, http, auth … are adapters below the modules: they never import modules/ (or app.ts, the seed).',
    },
    {
      target: 'server/src/modules',
      from: serverTop,
      message: 'Modules do not import app.ts, main.ts or the seed: those compose the modules.',
    },
    {
      target: 'contracts/src',
      from: ['server', 'web', 'scripts'],
      message: 'contracts/ is the shapes both sides share: it imports nothing of the server or the web.',
    },
    { target: 'server/src', from: 'web', message: 'The server imports nothing of the web (shared shapes live in contracts/).' },
    { target: 'web/src', from: 'server', message: 'The web imports nothing of the server (shared shapes live in contracts/).' },
  ];
}

/** The whole configuration for a tree rooted at `base`. */
export function lintConfig(base) {
  return [
    { ignores: ['**/node_modules/**', '**/dist/**', 'scripts/lint-fixtures/**', 'data/**', '.tmp/**'] },
    {
      files: SOURCES,
      linterOptions: { reportUnusedDisableDirectives: 'error' },
      languageOptions: {
        parser: tseslint.parser,
        parserOptions: { ecmaFeatures: { jsx: true } },
        ecmaVersion: 'latest',
        sourceType: 'module',
      },
      plugins: { 'import-x': importX, '@typescript-eslint': tseslint.plugin },
      settings: {
        'import-x/extensions': ['.ts', '.tsx', '.mts', '.js', '.mjs'],
        'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.d.ts', '.mts', '.js', '.mjs', '.json'] })],
      },
      rules: {
        // Type-only imports do not count (nothing runs); lazy `import()` does.
        'import-x/no-cycle': ['error', { ignoreExternal: true }],
        'no-control-regex': 'error',
        '@typescript-eslint/no-explicit-any': 'error',
      },
    },
    {
      files: ['web/src/**/*.{ts,tsx}'],
      plugins: { 'react-hooks': reactHooks },
      // As the plugin recommends: a missing dependency is a warning (printed, not failing).
      rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
    },
    {
      files: SOURCES,
      ignores: TESTS,
      rules: { 'import-x/no-restricted-paths': ['error', { basePath: base, zones: layerZones(base) }] },
    },
  ];
}

export default lintConfig(import.meta.dirname);
