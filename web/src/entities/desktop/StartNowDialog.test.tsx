import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { TDesktop } from '@vdi/contracts';
import i18n from '../../i18n';
import { HttpError } from '../../lib/api';
import en from '../../i18n/locales/en.json';
import enB from '../../i18n/locales/bookings/en.json';
import { StartNowDialog } from './StartNowDialog';

const desktop = { id: 'd1', name: 'GPU desktop', reservables: { vgpus: ['NVIDIA-A40-4Q'] } } as unknown as TDesktop;
const inAnHour = new Date(Date.now() + 3600_000).toISOString();
const refusal = (code: string) => new HttpError(428, { error: 'precondition_required', msg: '', description_code: code, description: '', params: null }, new Headers());

/** The server's answers, by path: a JSON body, or a catalogue error. */
function serve(answers: Record<string, { status: number; body: unknown }>) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const path = Object.keys(answers).find((p) => url.includes(p));
      const a = path ? answers[path]! : { status: 404, body: { error: 'not_found', msg: '', description_code: 'not_found', description: '', params: null } };
      return new Response(JSON.stringify(a.body), { status: a.status, headers: { 'content-type': 'application/json' } });
    }),
  );
}
const refused = (code: string) => ({ status: 428, body: { error: 'precondition_required', msg: code, description_code: code, description: code, params: null } });

function show(code: string) {
  void i18n.changeLanguage('en-US');
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <MantineProvider>
      <QueryClientProvider client={qc}>
        <StartNowDialog d={desktop} refusal={refusal(code)} onClose={() => {}} navigate={() => {}} />
      </QueryClientProvider>
    </MantineProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('start-now and cannot-start dialog', () => {
  it('offers booking from now and starting when the desktop may start now', async () => {
    serve({
      '/booking/max_booking_date/d1': { status: 200, body: { max_booking_date: inAnHour } },
      '/booking/reservables_available': { status: 200, body: { reservables_available: [{ id: 'NVIDIA-A40-4Q', name: 'A40 4 GB', description: '', max_booking_date: inAnHour }] } },
    });
    show('desktop_not_booked');
    expect(await screen.findByTestId('start-now-dialog')).toBeInTheDocument();
    expect(screen.getByTestId('start-reason')).toHaveTextContent(en.errors.desktop_not_booked);
    expect(screen.getByTestId('start-now-confirm')).toHaveTextContent(enB.bookings.start_now.confirm);
    expect(screen.getByTestId('start-go-bookings')).toBeInTheDocument();
  });

  it('offers changing to a profile available now, or going to bookings, when the plan does not match', async () => {
    serve({
      '/booking/max_booking_date/d1': refused('current_plan_doesnt_match'),
      '/booking/reservables_available': { status: 200, body: { reservables_available: [{ id: 'NVIDIA-A40-2Q', name: 'A40 2 GB', description: '', max_booking_date: inAnHour }] } },
    });
    show('desktop_not_booked');
    expect(await screen.findByTestId('cannot-start-dialog')).toBeInTheDocument();
    expect(screen.getByTestId('start-reason')).toHaveTextContent(en.errors.current_plan_doesnt_match);
    expect(screen.getByTestId('start-now-confirm')).toHaveTextContent(enB.bookings.start_now.change_and_start);
    expect(screen.getByTestId('start-go-bookings')).toBeInTheDocument();
  });

  it('offers only going to bookings when no profile is available', async () => {
    serve({
      '/booking/max_booking_date/d1': refused('current_plan_doesnt_match'),
      '/booking/reservables_available': refused('no_available_profile'),
    });
    show('no_available_profile');
    expect(await screen.findByTestId('cannot-start-dialog')).toBeInTheDocument();
    expect(screen.getByTestId('start-no-profile')).toHaveTextContent(enB.bookings.start_now.only_bookings);
    expect(screen.queryByTestId('start-now-confirm')).toBeNull();
    expect(screen.getByTestId('start-go-bookings')).toBeInTheDocument();
  });
});
