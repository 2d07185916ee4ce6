import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { TAdminCategory } from '@vdi/contracts';
import i18n from '../../../i18n';
import { HYPERVISORS_KEY } from '../../../entities/hypervisor/api';
import { categoryPoolsQuery } from './api';
import { CategoryPools } from './CategoryPools';

const GB = 1024 ** 3;
const pool = (name: string, free: number) => ({ name, path: `/srv/${name}`, capacity_bytes: 100 * GB, free_bytes: free * GB });
const hosts = {
  items: [
    { id: 'local', name: 'This server', pools: [pool('default', 40)] },
    { id: 'east', name: 'East wing', pools: [pool('local', 70), pool('nfs-fast', 20)] },
  ],
  total: 2,
};
const category = (id: string, name: string, storage_pool: string | null) => ({ id, name, storage_pool }) as TAdminCategory;

/** The server: the categories and hosts in the cache; the category route's PUTs recorded and answered. */
function show(cats: TAdminCategory[]) {
  const puts: { url: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', vi.fn(async (url: string, init?: RequestInit) => {
    if (init?.method !== 'PUT') return new Response('{}', { status: 404 });
    const body = JSON.parse(String(init.body)) as { storage_pool: string };
    puts.push({ url, body });
    const id = decodeURIComponent(url.split('/').pop()!);
    const was = cats.find((c) => c.id === id)!;
    const answer = { ...was, description: '', custom_url_name: id, frontend: true, allowed_email_domains: [], maintenance: false, recycle_bin_cutoff_hours: null, quota: null, limits: null, users: 0, groups: 0, storage_pool: body.storage_pool === 'default' ? null : body.storage_pool };
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  }));
  void i18n.changeLanguage('en-US');
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  qc.setQueryData(HYPERVISORS_KEY, hosts);
  qc.setQueryData(categoryPoolsQuery.queryKey, { items: cats, total: cats.length });
  render(
    <MantineProvider>
      <Notifications />
      <QueryClientProvider client={qc}>
        <CategoryPools />
      </QueryClientProvider>
    </MantineProvider>,
  );
  return puts;
}
const card = (name: string) => screen.getAllByTestId('category-pool').find((c) => c.dataset.pool === name)!;

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("the Storage page's pools and categories", () => {
  it('lists the shared folder and every host pool with where it is and its categories; a pool no host has says so', async () => {
    show([category('default', 'Default', null), category('lab', 'Research Lab', 'nfs-fast'), category('old', 'Archive', 'gone')]);
    expect(screen.getAllByTestId('category-pool').map((c) => c.dataset.pool)).toEqual(['default', 'local', 'nfs-fast', 'gone']);
    expect(card('default')).toHaveTextContent('Shared storage folder');
    expect(within(card('default')).getByTestId('category-pool-host')).toHaveTextContent('This server: 40 GB free of 100 GB');
    expect(within(card('default')).getByTestId('category-pool-categories')).toHaveTextContent('Default');
    expect(within(card('nfs-fast')).getByTestId('category-pool-host')).toHaveTextContent('East wing: 20 GB free of 100 GB');
    expect(within(card('nfs-fast')).getByTestId('category-pool-categories')).toHaveTextContent('Research Lab');
    expect(within(card('local')).getByTestId('category-pool-categories')).toHaveTextContent('No category');
    expect(card('gone')).toHaveTextContent('No hypervisor has it');
    expect(within(card('gone')).queryByTestId('category-pool-host')).toBeNull();
  });

  it("an admin maps a category to a pool through the category's route; the cards follow", async () => {
    const puts = show([category('default', 'Default', null), category('lab', 'Research Lab', 'nfs-fast')]);
    const [, lab] = screen.getAllByTestId('category-pool-select');
    fireEvent.click(lab!);
    fireEvent.click(await screen.findByRole('option', { name: 'local' }));
    await waitFor(() => expect(puts).toEqual([{ url: expect.stringMatching(/\/admin\/categories\/lab$/), body: { storage_pool: 'local' } }]));
    await waitFor(() => expect(within(card('local')).getByTestId('category-pool-categories')).toHaveTextContent('Research Lab'));
    expect(within(card('nfs-fast')).getByTestId('category-pool-categories')).toHaveTextContent('No category');
    expect(await screen.findByText('Research Lab now uses local')).toBeInTheDocument();
  });
});
