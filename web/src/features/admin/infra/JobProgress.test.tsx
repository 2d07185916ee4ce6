import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import type { TAdminJob } from '@vdi/contracts';
import i18n from '../../../i18n';
import { JobProgress } from './JobsPage';

const job = (over: Partial<TAdminJob>): TAdminJob => ({
  id: 'j1', kind: 'base_copy', status: 'running', progress: 47, target_id: 's1', target_name: 'base.qcow2', user_id: 'u1', user_name: 'admin',
  category: 'default', error: null, created: '2026-11-29T01:00:00Z', updated: '2026-11-29T01:00:01Z', bytes: null, ...over,
});

const show = (j: TAdminJob) =>
  render(
    <MantineProvider>
      <JobProgress j={j} />
    </MantineProvider>,
  );

afterEach(cleanup);

describe("a job's progress", () => {
  it("a template copy to a hypervisor says how many bytes of how many, in the reader's language", async () => {
    await i18n.changeLanguage('ca');
    show(job({ bytes: { done: 7.5 * 1024 * 1024, total: 15 * 1024 * 1024 } }));
    expect(screen.getByText('47 %')).toBeTruthy();
    expect(screen.getByTestId('job-bytes')).toHaveTextContent('7,5 MB de 15 MB');
    await i18n.changeLanguage('en-US');
    cleanup();
    show(job({ bytes: { done: 7.5 * 1024 * 1024, total: 15 * 1024 * 1024 } }));
    expect(screen.getByTestId('job-bytes')).toHaveTextContent('7.5 MB of 15 MB');
  });

  it('other jobs show the bar only', () => {
    show(job({ kind: 'media_download', bytes: null }));
    expect(screen.queryByTestId('job-bytes')).toBeNull();
  });
});
