// The order in which Vitest starts the files: longest first, so that the long ones (a guest that
// boots, an engine suite under TCG) do not start last on one worker while the others are idle.
// Vitest's own order does this only with its cache of the last run; a fresh clone has none and
// started files by size, so a 100-second suite could start last. The seconds each file took in a
// measured run are in vitest-durations.json (only the order depends on them; files not listed
// take less than 2 s and keep Vitest's order after the listed ones).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer } from 'vitest/node';

const measured = JSON.parse(readFileSync(new URL('./vitest-durations.json', import.meta.url), 'utf8'));

export class LongestFirst extends BaseSequencer {
  async sort(files) {
    const ordered = await super.sort(files);
    const cache = this.ctx.cache;
    const seconds = (spec) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      // This machine's last run when it has one, else the measured run.
      const last = cache.getFileTestResults(key)?.duration;
      return last !== undefined ? last / 1000 : (measured[key] ?? 0);
    };
    const at = new Map(ordered.map((spec, i) => [spec, i]));
    return ordered.sort((a, b) => seconds(b) - seconds(a) || at.get(a) - at.get(b));
  }
}
