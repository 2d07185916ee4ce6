import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The repository's own lint rules (eslint.config.mjs `lintConfig`), run on a small tree whose
// files each break the layering one way (scripts/lint-fixtures/): the rules must name exactly those.
const root = join(import.meta.dirname, '..', '..');
const fixtures = join(root, 'scripts', 'lint-fixtures');

describe('the lint rules that keep the layers', () => {
  it('fail on imports up a layer, between features, from an adapter or contracts upwards, and on a cycle; nothing else', async () => {
    const { lintConfig } = await import(pathToFileURL(join(root, 'eslint.config.mjs')).href);
    const eslint = new ESLint({ cwd: fixtures, overrideConfigFile: true, overrideConfig: lintConfig(fixtures) });
    const results = await eslint.lintFiles(['.']);
    const found = results
      .flatMap((r) => r.messages.map((m) => `${relative(fixtures, r.filePath)}:${m.line} ${m.ruleId ?? m.message}`))
      .sort();
    expect(found).toEqual([
      'contracts/src/shapes.ts:2 import-x/no-restricted-paths',
      'server/src/engine/disks.ts:2 import-x/no-restricted-paths',
      'server/src/modules/recycle/entries.ts:2 import-x/no-cycle',
      'server/src/modules/recycle/recycle.ts:1 import-x/no-cycle',
      'web/src/entities/desktop.ts:2 import-x/no-restricted-paths',
      'web/src/features/a/Page.ts:5 import-x/no-restricted-paths',
      'web/src/lib/format.ts:2 import-x/no-restricted-paths',
    ]);
  });
});
