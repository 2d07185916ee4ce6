import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { Alert, Badge, Button, Card, Group, Loader, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCalendarEvent, IconList, IconPlus } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { validateBooking, ZBookingItemType, type TBookingItemType } from '@vdi/contracts';
import { notifySuccess, NOTIFY_MS } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { BOOKINGS_KEY, createBooking, deleteBooking, itemBookingsQuery, priorityQuery, updateBooking, userBookingsQuery } from '../../entities/booking/api';
import { Calendar } from '../../entities/booking/Calendar';
import { EventModal, type EventDraft } from '../../entities/booking/EventModal';
import { Legend } from './Legend';
import { useBookingsLive } from '../../entities/booking/live';
import { availabilityEvents, bookingEvents, dailyAvailabilityEvents, futureCount, ruleEvents, ruleMessage } from '../../entities/booking/logic';
import { toDate } from '../../entities/booking/dates';
import { hardwareAllowedQuery } from '../../entities/domain/api';
import '../../i18n/areas/bookings';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';

const HOUR_MS = 3600_000;
const YEAR_MS = 366 * 24 * HOUR_MS;

function Limits({ forbid, maxTime, maxItems }: { forbid: number; maxTime: number | null; maxItems: number | null }) {
  const { t } = useTranslation();
  return (
    <Group gap="xs" wrap="wrap" data-testid="booking-limits">
      {forbid > 0 && (
        <Badge variant="light" color="gray" radius="sm">
          {t('bookings.limits.forbid', { count: forbid })}
        </Badge>
      )}
      {maxTime != null && (
        <Badge variant="light" color="gray" radius="sm">
          {t('bookings.limits.max_time', { count: maxTime })}
        </Badge>
      )}
      {maxItems != null && (
        <Badge variant="light" color="gray" radius="sm">
          {t('bookings.limits.max_items', { count: maxItems })}
        </Badge>
      )}
    </Group>
  );
}

/** /booking/{type}/{id}: the calendar of one desktop or deployment. */
export default function BookingPage() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const params = useParams();
  const typeParsed = ZBookingItemType.safeParse(params.type);
  const type: TBookingItemType = typeParsed.success ? typeParsed.data : 'desktop';
  const id = params.id ?? '';
  const [range, setRange] = useState<{ start: Date; end: Date } | null>(null);
  const [draft, setDraft] = useState<EventDraft | null>(null);
  const [now] = useState(() => new Date());
  const upcoming = useMemo(() => ({ start: now, end: new Date(now.getTime() + YEAR_MS) }), [now]);

  const priority = useQuery({ ...priorityQuery(type, id), enabled: typeParsed.success && Boolean(id) });
  const item = useQuery({ ...itemBookingsQuery(type, id, range), enabled: typeParsed.success && Boolean(range) });
  const mine = useQuery({ ...userBookingsQuery(upcoming), meta: HANDLES_ERROR });
  const allowed = useQuery(hardwareAllowedQuery);
  useBookingsLive();

  const events = useMemo(() => [...availabilityEvents(item.data?.availability ?? [], t), ...bookingEvents(item.data?.events ?? [], false, (s) => builtInText(t, s))], [item.data, t]);
  const monthEvents = useMemo(() => dailyAvailabilityEvents(item.data?.availability ?? [], t), [item.data, t]);

  if (!typeParsed.success || priority.isError)
    return (
      <EmptyState
        icon={<IconAlertTriangle size={30} />}
        title={t('bookings.item_error_title')}
        body={t('bookings.item_error_body')}
        action={
          <Button component={Link} to="/desktops" variant="default">
            {t('bookings.back_to_desktops')}
          </Button>
        }
      />
    );

  // The rules that read the calendar need it for the typed range: the loaded one when it covers
  // the booking, else the item's calendar of that range (a booking next week, seen from this one).
  const calendarOf = async (start: Date, end: Date) =>
    range && item.data && range.start <= start && end <= range.end ? item.data : qc.fetchQuery({ ...itemBookingsQuery(type, id, { start, end }), meta: HANDLES_ERROR });
  const validate = async (start: Date, end: Date, editingId?: string) => {
    if (!priority.data) return null;
    const calendar = await calendarOf(start, end);
    const current = new Date();
    const err = validateBooking({
      range: { start, end },
      now: current,
      priority: priority.data,
      futureBookings: futureCount(mine.data ?? [], current, editingId),
      events: ruleEvents(calendar.events, calendar.availability),
      units: priority.data.units,
      editingId,
    });
    return err ? ruleMessage(t, err) : null;
  };

  const save = async (d: EventDraft) => {
    if (d.id) await updateBooking(d.id, d);
    else await createBooking({ elementId: id, elementType: type, title: d.title, start: d.start, end: d.end });
    notifySuccess(t(d.id ? 'bookings.notify.updated' : 'bookings.notify.created'));
    void qc.invalidateQueries({ queryKey: BOOKINGS_KEY });
    void qc.invalidateQueries({ queryKey: ['desktops'] });
  };
  const remove = async (bookingId: string) => {
    await deleteBooking(bookingId);
    notifySuccess(t('bookings.notify.deleted'));
    void qc.invalidateQueries({ queryKey: BOOKINGS_KEY });
    void qc.invalidateQueries({ queryKey: ['desktops'] });
  };

  const openEvent = (eventId: string) => {
    const b = item.data?.events.find((e) => e.id === eventId);
    if (!b) return;
    if (!b.editable) {
      notifications.show({ message: t('bookings.not_editable'), color: 'gray', autoClose: NOTIFY_MS });
      return;
    }
    setDraft({ id: b.id, title: b.title, start: toDate(b.start)!, end: toDate(b.end)! });
  };

  const name = builtInText(t, priority.data?.name ?? '');
  // Without dragging: the next whole hour, for an hour (the modal checks the rules anyway).
  const newBooking = () => {
    const start = new Date(Math.ceil(Date.now() / HOUR_MS) * HOUR_MS);
    setDraft({ title: name, start, end: new Date(start.getTime() + HOUR_MS) });
  };
  const profiles = priority.data?.reservables.vgpus ?? [];
  // A profile by its name where the person may see it (the ids are for machines).
  const profileName = (id: string) => allowed.data?.reservables.vgpus.find((v) => v.id === id)?.name ?? id;
  return (
    <>
      <PageHeader
        title={name ? t('bookings.item_heading', { name }) : t('bookings.heading')}
        subtitle={t(type === 'deployment' ? 'bookings.item_subheading_deployment' : type === 'pool' ? 'bookings.item_subheading_pool' : 'bookings.item_subheading')}
        actions={
          <>
            <Button component={Link} to="/booking/summary" variant="default" leftSection={<IconList size={16} />} data-testid="booking-to-summary">
              {t('bookings.all_bookings')}
            </Button>
            <Button leftSection={<IconPlus size={16} />} onClick={newBooking} disabled={!priority.data} data-testid="booking-new">
              {t('bookings.new')}
            </Button>
          </>
        }
      />
      <Stack gap="md">
        <Card withBorder radius="lg" padding="md">
          <Group justify="space-between" wrap="wrap" gap="sm">
            <Group gap="sm" wrap="wrap">
              <IconCalendarEvent size={18} color="var(--mantine-color-indigo-6)" />
              <Text size="sm">{t('bookings.how_to')}</Text>
              {profiles.map((p) => (
                <Badge key={p} variant="outline" radius="sm" data-testid="booking-profile" data-profile={p} tt="none">
                  {profileName(p)}
                </Badge>
              ))}
            </Group>
            {priority.data && <Limits forbid={priority.data.forbid_time} maxTime={priority.data.max_time} maxItems={priority.data.max_items} />}
          </Group>
        </Card>
        {item.data && item.data.availability.every((a) => a.event_type === 'unavailable') && (
          <Alert color="yellow" variant="light" icon={<IconAlertTriangle size={18} />} data-testid="booking-nothing-available">
            {t('bookings.nothing_in_range')}
          </Alert>
        )}
        <Card withBorder radius="lg" padding="md" pos="relative">
          {item.isFetching && <Loader size="xs" pos="absolute" top={12} right={12} role="status" aria-label={t('common.loading')} />}
          <Calendar
            events={events}
            monthEvents={monthEvents}
            onRange={setRange}
            onSelect={(start, end) => setDraft({ title: name, start, end })}
            onEventClick={openEvent}
            testId="booking-calendar"
          />
          <Legend mt="sm" />
        </Card>
      </Stack>
      <EventModal draft={draft} onClose={() => setDraft(null)} validate={validate} onSave={save} onDelete={remove} />
    </>
  );
}
