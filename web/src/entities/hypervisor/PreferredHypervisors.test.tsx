import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n';
import en from '../../i18n/locales/en.json';
import { userQuery } from '../../lib/queries';
import { HYPERVISORS_KEY, preferredBody } from './api';
import { PreferredHypervisorsCard } from './PreferredHypervisors';

const hosts = { items: [{ id: 'local', name: 'This server' }, { id: 'east', name: 'East wing' }, { id: 'west', name: 'West wing' }], total: 3 };

/** The server: the template's current choice; PUTs recorded (the caller and the hosts are in the cache). */
function serve() {
  const puts: unknown[] = [];
  const fetch = vi.fn(async (url: string, init?: RequestInit) => {
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    if (url.includes('/preferred/')) {
      if (init?.method === 'PUT') {
        puts.push(JSON.parse(String(init.body)));
        return json(JSON.parse(String(init.body)));
      }
      return json({ forced_hyp: ['gone'], favourite_hyp: ['east'] });
    }
    return new Response('{}', { status: 404 });
  });
  vi.stubGlobal('fetch', fetch);
  return { fetch, puts };
}

function show(role: string) {
  void i18n.changeLanguage('en-US');
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  qc.setQueryData(userQuery.queryKey, { id: 'u1', role });
  qc.setQueryData(HYPERVISORS_KEY, hosts);
  render(
    <MantineProvider>
      <Notifications />
      <QueryClientProvider client={qc}>
        <PreferredHypervisorsCard kind="template" id="tpl1" />
      </QueryClientProvider>
    </MantineProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('preferred hypervisors', () => {
  it('sends each host once, drops hosts that are gone, and never lists a forced host as favourite too', () => {
    const known = ['local', 'east', 'west'];
    expect(preferredBody(['east', 'east', 'gone'], ['east', 'west', 'west'], known)).toEqual({ forced_hyp: ['east'], favourite_hyp: ['west'] });
    expect(preferredBody([], [], known)).toEqual({ forced_hyp: [], favourite_hyp: [] });
  });

  it('shows admins the current choice by host name and saves a change through the route', async () => {
    const { puts } = serve();
    show('admin');
    expect(await screen.findByText(en.preferred_hypervisors.title)).toBeInTheDocument();
    // The stored favourite shows by name; the stored id of a removed host is not offered back.
    await waitFor(() => expect(screen.getByTestId('preferred-favourite').closest('.mantine-MultiSelect-root')).toHaveTextContent('East wing'));
    const save = screen.getByTestId('preferred-save');
    // "gone" dropped: the form differs from what is stored, so it may be saved.
    expect(save).toBeEnabled();
    fireEvent.click(save);
    await waitFor(() => expect(puts).toEqual([{ forced_hyp: [], favourite_hyp: ['east'] }]));
    expect(await screen.findByText(en.preferred_hypervisors.saved)).toBeInTheDocument();
  });

  it('shows managers and teachers nothing, and asks the server nothing', async () => {
    for (const role of ['manager', 'advanced']) {
      const { fetch } = serve();
      show(role);
      await new Promise((r) => setTimeout(r, 0));
      expect(screen.queryByTestId('preferred-hypervisors')).toBeNull();
      expect(fetch.mock.calls.some(([u]) => String(u).includes('hypervisors'))).toBe(false);
      cleanup();
    }
  });
});
