// A Vitest reporter for `npm test`: writes, to the file VITEST_OUTCOMES names, the counts of passed
// and failed tests and every test that did not run and why: skipped on purpose (its reason is in its title, "[skipped: …]", see
// server/test/helpers/can-run.ts), or not run because a set-up of its file failed or timed out
// (a beforeAll hook: Vitest reports those tests as skipped, which `npm test` counts as failed),
// and the errors of files that failed outside any test (an afterAll, an import); the failed tests with
// the first line of their error (the summary repeats them at its end, where a runner's tail shows them).
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const REASON = /\[skipped: (.+)\]\s*$/;

/** The first error of the test's nearest suite (or its file) that failed, if any. */
function failedSetUp(test) {
  for (let node = test.parent; node; node = node.type === 'module' ? undefined : node.parent) {
    const errors = node.errors?.() ?? [];
    if (node.state?.() === 'failed' && errors.length > 0) return errors[0].message ?? String(errors[0]);
  }
  return undefined;
}

const titleOf = (test) => {
  const names = [];
  for (let node = test; node && node.type !== 'module'; node = node.parent) names.unshift(node.name);
  return names.join(' › ');
};

export default class OutcomesReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules, unhandledErrors) {
    const out = { passed: 0, failed: 0, failedTests: [], skipped: [], notRun: [], fileErrors: [], unhandled: unhandledErrors.map((e) => (e.message ?? String(e)).split('\n')[0]) };
    for (const mod of testModules) {
      const file = `${mod.project.name} ${relative(this.root, mod.moduleId)}`;
      let notRunHere = 0;
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const r = test.result();
        if (r.state === 'passed') out.passed++;
        if (r.state === 'failed') {
          out.failed++;
          failedHere++;
          const error = r.errors?.[0];
          out.failedTests.push({ file, name: titleOf(test), error: (error?.message ?? String(error ?? '')).split('\n')[0].slice(0, 300) });
        }
        if (r.state !== 'skipped' && r.state !== 'pending') continue;
        const title = titleOf(test);
        // Declared skips (it.skip, describe.skip, todo) and skips at run time with a note
        // (context.skip(note)) are on purpose; a test meant to run that did not was taken down.
        const declared = test.options.mode === 'skip' || test.options.mode === 'todo' || r.note !== undefined;
        if (!declared) {
          notRunHere++;
          out.notRun.push({ file, name: title, error: (failedSetUp(test) ?? 'did not run (its set-up failed or the run was cut short)').split('\n')[0] });
          continue;
        }
        out.skipped.push({ file, name: title.replace(REASON, '').trim(), reason: REASON.exec(title)?.[1] ?? r.note, todo: test.options.mode === 'todo' });
      }
      // Errors of the file itself (an afterAll, an import): named, whatever else happened in it.
      if (mod.state() === 'failed') {
        for (const e of mod.errors()) out.fileErrors.push({ file, error: (e.message ?? String(e)).split('\n')[0], failedTests: failedHere + notRunHere });
      }
    }
    if (process.env.VITEST_OUTCOMES) writeFileSync(process.env.VITEST_OUTCOMES, JSON.stringify(out, null, 2));
  }
}
