import { useMemo, useState } from 'react';
import { Alert, Button, Group, Loader, Select, Stack, Text } from '@mantine/core';
import { modals } from '../../lib/modals';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCalendarEvent, IconPlayerPlay } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { parseBookingDate, startNowEndOptions, type TDesktop } from '@vdi/contracts';
import { notifySuccess } from '../../lib/error-handler';
import i18next from '../../i18n';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { useAction } from '../../lib/use-action';
import { desktopCall, DESKTOPS_KEY } from './api';
import { setReservables } from '../domain/api';
import { BOOKINGS_KEY, createBooking, maxBookingDate, reservablesAvailable } from '../booking/api';
import { formatLocalDate } from '../booking/dates';
import '../../i18n/areas/bookings';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';

/** Start refusals of a desktop that needs a booking (spec core §8): they open this dialog instead of a notice. */
export const START_REFUSALS = [
  'desktop_not_booked',
  'desktop_not_booked_until',
  'needs_deployment_booking',
  'current_plan_doesnt_match',
  'not_enough_time_to_start',
  'no_available_profile',
] as const;

export const isStartRefusal = (err: unknown): err is HttpError => err instanceof HttpError && (START_REFUSALS as readonly string[]).includes(err.code);

type Choice = { id: string; name: string; max: Date };

const codeOf = (err: unknown) => (err instanceof HttpError ? err.code : 'generic_error');

/**
 * What a desktop that needs a booking offers when it cannot start now:
 * - start now: it may be booked from now (max_booking_date answers): choose the profile and an
 *   end in 30-minute steps, book with now:true and start;
 * - cannot start (current_plan_doesnt_match, not_enough_time_to_start, …): change to a profile that
 *   is available now and start, or go to bookings; with no_available_profile only go to bookings.
 */
export function StartNowDialog({ d, refusal, onClose, navigate }: { d: TDesktop; refusal: HttpError; onClose: () => void; navigate: (to: string) => void }) {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const current = d.reservables.vgpus?.[0] ?? null;
  const max = useQuery({ queryKey: [...BOOKINGS_KEY, 'max', d.id], queryFn: () => maxBookingDate(d.id), staleTime: 0, gcTime: 0, meta: HANDLES_ERROR });
  const others = useQuery({ queryKey: [...BOOKINGS_KEY, 'available_now'], queryFn: reservablesAvailable, staleTime: 0, gcTime: 0, meta: HANDLES_ERROR });
  const deploymentOnly = refusal.code === 'needs_deployment_booking' || codeOf(max.error) === 'needs_deployment_booking';
  const canStartNow = max.isSuccess && !deploymentOnly;

  // The profiles offered: the desktop's own first when it may be booked from now, then the others available now.
  const choices = useMemo<Choice[]>(() => {
    if (deploymentOnly) return [];
    const available = others.isSuccess ? others.data : [];
    const out: Choice[] = [];
    const own = canStartNow ? parseBookingDate(max.data) : null;
    if (own && current) out.push({ id: current, name: available.find((r) => r.id === current)?.name ?? current, max: own });
    for (const r of available) {
      const until = parseBookingDate(r.max_booking_date);
      if (until && r.id !== current) out.push({ id: r.id, name: r.name, max: until });
    }
    return out;
  }, [canStartNow, current, max.data, deploymentOnly, others.isSuccess, others.data]);

  const [profile, setProfile] = useState<string | null>(null);
  const [end, setEnd] = useState<string | null>(null);
  const chosen = choices.find((c) => c.id === profile) ?? choices[0] ?? null;
  // Whole minutes, as the server's max booking date: now + max_time is then one of the steps.
  const [now] = useState(() => new Date(Math.floor(Date.now() / 60_000) * 60_000));
  const ends = useMemo(() => (chosen ? startNowEndOptions(now, chosen.max) : []), [chosen, now]);
  const endValue = end && ends.some((e) => String(e.getTime()) === end) ? end : ends.length ? String(ends[ends.length - 1]!.getTime()) : null;
  const action = useAction();
  // desktop_not_booked_until carries the start of the next booking: shown in local time.
  const start = refusal.body.params?.start;
  const refusalText =
    typeof start === 'string' ? t(`errors.${refusal.code}`, { ...refusal.body.params, start: formatLocalDate(start) || start }) : errorMessage(t, refusal, (k) => i18n.exists(k));

  const loading = max.isLoading || others.isLoading;
  const changing = Boolean(chosen && chosen.id !== current);
  const failure = max.error ?? (choices.length ? null : others.error);
  const reason = canStartNow || !failure || codeOf(failure) === refusal.code ? null : errorMessage(t, failure, (k) => i18n.exists(k));
  const noProfile = !canStartNow && !loading && choices.length === 0;

  const go = () =>
    void action.run(async () => {
      if (!chosen || !endValue) return;
      if (changing) await setReservables(d.id, [chosen.id]);
      await createBooking({ elementId: d.id, elementType: 'desktop', title: d.name, start: new Date(), end: new Date(Number(endValue)), now: true });
      await desktopCall('start', d.id);
      notifySuccess(t('bookings.start_now.started', { name: builtInText(t, d.name) }));
      void qc.invalidateQueries({ queryKey: BOOKINGS_KEY });
      void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
      onClose();
    });

  return (
    <Stack gap="md" data-testid={loading ? 'start-dialog-loading' : canStartNow ? 'start-now-dialog' : 'cannot-start-dialog'}>
      <Alert color={canStartNow ? 'blue' : 'orange'} variant="light" icon={canStartNow ? <IconCalendarEvent size={18} /> : <IconAlertTriangle size={18} />} data-testid="start-reason">
        <Stack gap={4}>
          <Text size="sm">{refusalText}</Text>
          {reason && !loading && <Text size="sm">{reason}</Text>}
        </Stack>
      </Alert>
      {loading && (
        <Group justify="center" py="md">
          <Loader size="sm" />
        </Group>
      )}
      {!loading && choices.length > 0 && (
        <>
          <Text size="sm">{t(canStartNow ? 'bookings.start_now.body' : 'bookings.start_now.change_body', { name: builtInText(t, d.name) })}</Text>
          <Select
            label={t('bookings.start_now.profile')}
            data={choices.map((c) => ({ value: c.id, label: c.name }))}
            value={chosen?.id ?? null}
            onChange={(v) => {
              setProfile(v);
              setEnd(null);
            }}
            allowDeselect={false}
                        comboboxProps={{ withinPortal: true }}
            data-testid="start-now-profile"
          />
          <Select
            label={t('bookings.start_now.end')}
            description={chosen ? t('bookings.start_now.until', { date: formatLocalDate(chosen.max) }) : undefined}
            data={ends.map((e) => ({ value: String(e.getTime()), label: formatLocalDate(e) }))}
            value={endValue}
            onChange={setEnd}
            allowDeselect={false}
            comboboxProps={{ withinPortal: true }}
            data-testid="start-now-end"
          />
          {changing && (
            <Text size="xs" c="dimmed">
              {t('bookings.start_now.change_warning')}
            </Text>
          )}
        </>
      )}
      {noProfile && !deploymentOnly && (
        <Text size="sm" c="dimmed" data-testid="start-no-profile">
          {t('bookings.start_now.only_bookings')}
        </Text>
      )}
      {action.error && (
        <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} />} data-testid="start-now-error">
          {action.error}
        </Alert>
      )}
      <Group justify="flex-end" gap="sm">
        <Button variant="default" onClick={onClose}>
          {t('common.cancel')}
        </Button>
        <Button
          variant="light"
          leftSection={<IconCalendarEvent size={16} />}
          onClick={() => {
            onClose();
            navigate(deploymentOnly ? '/booking/summary' : `/booking/desktop/${encodeURIComponent(d.id)}`);
          }}
          data-testid="start-go-bookings"
        >
          {t('bookings.start_now.go_bookings')}
        </Button>
        {!loading && choices.length > 0 && ends.length > 0 && (
          <Button color="teal" leftSection={<IconPlayerPlay size={16} />} loading={action.busy} onClick={go} data-testid="start-now-confirm">
            {t(changing ? 'bookings.start_now.change_and_start' : 'bookings.start_now.confirm')}
          </Button>
        )}
      </Group>
    </Stack>
  );
}

/**
 * Opens the start-now or cannot-start dialog for a desktop whose start was refused (a modal of the
 * provider, outside the router: it navigates through the function it is given).
 */
export function openStartDialog(d: TDesktop, refusal: HttpError, navigate: (to: string) => void) {
  const id = modals.open({
    title: i18next.t('bookings.start_now.title', { name: builtInText(i18next.t, d.name) }),
    centered: true,
    size: 'lg',
    children: <StartNowDialog d={d} refusal={refusal} navigate={navigate} onClose={() => modals.close(id)} />,
  });
}
