import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { TDesktop } from '@vdi/contracts';
import i18n from '../../i18n';
import { configQuery } from '../../lib/queries';
import { DesktopNotices } from './DesktopCard';

const desktop = (hypervisor: string | null) =>
  ({ id: 'd1', name: 'Desk', type: 'persistent', ip: null, current_action: null, scheduled: { shutdown: false }, next_booking_start: null, next_booking_end: null, needs_booking: false, hypervisor }) as unknown as TDesktop;

function show(d: TDesktop, multiple: boolean) {
  void i18n.changeLanguage('en-US');
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  qc.setQueryData(configQuery.queryKey, { multiple_hypervisors: multiple });
  render(
    <MantineProvider>
      <QueryClientProvider client={qc}>
        <DesktopNotices d={d} />
      </QueryClientProvider>
    </MantineProvider>,
  );
}

afterEach(cleanup);

describe("the card's host line", () => {
  it('names the host while the desktop runs, when the installation has several', () => {
    show(desktop('East wing'), true);
    expect(screen.getByTestId('desktop-host')).toHaveTextContent('Runs on East wing');
  });

  it('says nothing with one host, or at rest', () => {
    show(desktop('East wing'), false);
    expect(screen.queryByTestId('desktop-host')).toBeNull();
    cleanup();
    show(desktop(null), true);
    expect(screen.queryByTestId('desktop-host')).toBeNull();
  });

  it("shows this server's own host in the reader's language", async () => {
    await i18n.changeLanguage('de-DE');
    const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity } } });
    qc.setQueryData(configQuery.queryKey, { multiple_hypervisors: true });
    render(
      <MantineProvider>
        <QueryClientProvider client={qc}>
          <DesktopNotices d={desktop('This server')} />
        </QueryClientProvider>
      </MantineProvider>,
    );
    expect(screen.getByTestId('desktop-host')).toHaveTextContent('Läuft auf Dieser Server');
  });
});

describe("the card's warnings", () => {
  it('says why a start failed on a host the guest network does not reach, with nothing else to show', () => {
    show({ ...desktop(null), current_action: 'hypervisor_guest_network_missing' } as TDesktop, true);
    expect(screen.getByTestId('desktop-host-not-prepared')).toBeInTheDocument();
  });

  it("says a start failed because the host's storage pool is full", () => {
    show({ ...desktop(null), current_action: 'storage_pool_full' } as TDesktop, true);
    expect(screen.getByTestId('desktop-host-not-prepared')).toHaveTextContent(/no room/);
  });
});
