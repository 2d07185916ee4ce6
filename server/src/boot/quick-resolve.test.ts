import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { quickResolution } from './quick-resolve';

const src = join(import.meta.dirname, '..');

describe('quick resolution of packages\' own imports', () => {
  it('answers as Node does for every one it answers while the server loads, and for most of drizzle-orm\'s', () => {
    // In a fresh process: each resolution of the server's module graph asked of Node and of the quick one side by side.
    const script = `
      const { registerHooks } = await import('node:module');
      const { quickResolver } = await import(${JSON.stringify(pathToFileURL(join(src, 'boot', 'quick-resolve.ts')).href)});
      const quickly = quickResolver();
      const seen = { quick: 0, drizzle: 0, mismatches: [] };
      registerHooks({ resolve(specifier, context, next) {
        const own = next(specifier, context);
        // (Node's answer is what the quick resolver's own Node would give: those it passes on are Node's by construction)
        let passed = false;
        const quick = quickly(specifier, context, () => ((passed = true), own));
        if (!passed) {
          seen.quick++;
          if (own.url.includes('/drizzle-orm/')) seen.drizzle++;
          if (quick.url !== own.url || quick.format !== (own.format ?? quick.format)) seen.mismatches.push({ specifier, parent: context.parentURL, quick, own });
        }
        return own;
      } });
      await import(${JSON.stringify(pathToFileURL(join(src, 'app.ts')).href)});
      await import(${JSON.stringify(pathToFileURL(join(src, 'engine', 'index.ts')).href)});
      process.stdout.write(JSON.stringify(seen));
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(src, '..'), encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
    expect(run.status, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout) as { quick: number; drizzle: number; mismatches: unknown[] };
    expect(seen.mismatches).toEqual([]);
    expect(seen.drizzle).toBeGreaterThan(50);
    expect(seen.quick - seen.drizzle, 'bare specifiers answered again from the same folder').toBeGreaterThan(50);
  }, 120_000);

  it('leaves to Node what is not a package\'s relative import of an existing file, and every require', () => {
    const parent = pathToFileURL(join(src, '..', '..', 'node_modules', 'drizzle-orm', 'index.js')).href;
    expect(quickResolution('./sql/sql.js', parent, ['node', 'import'])?.format).toBe('module');
    expect(quickResolution('./sql/sql.js', parent, ['node', 'require'])).toBeNull();
    expect(quickResolution('./no-such-file.js', parent, ['node', 'import'])).toBeNull();
    expect(quickResolution('./sql', parent, ['node', 'import'])).toBeNull();
    expect(quickResolution('pg', parent, ['node', 'import'])).toBeNull();
    expect(quickResolution('./config.js', pathToFileURL(join(src, 'app.ts')).href, ['node', 'import'])).toBeNull();
  });
});
