import { useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Anchor, Badge, Button, Card, Group, SegmentedControl, Skeleton, Stack, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { useQuery } from '@tanstack/react-query';
import { IconCalendar, IconCalendarOff, IconDeviceDesktop, IconLayoutList, IconServer2, IconStack2 } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TBooking } from '@vdi/contracts';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { userBookingsQuery } from '../../entities/booking/api';
import { Calendar } from '../../entities/booking/Calendar';
import { formatLocalDate, toDate } from '../../entities/booking/dates';
import { useBookingsLive } from '../../entities/booking/live';
import { bookingEvents } from '../../entities/booking/logic';
import '../../i18n/areas/bookings';
import { builtInText } from '../../lib/built-in-text';

type Mode = 'list' | 'calendar';
const MODE_KEY = 'vdi.bookings.summary';
const DAY_MS = 24 * 3600_000;

const itemPath = (b: Pick<TBooking, 'item_type' | 'item_id'>) => `/booking/${b.item_type}/${encodeURIComponent(b.item_id)}`;

function StatusBadge({ b, now }: { b: TBooking; now: number }) {
  const { t } = useTranslation();
  const start = toDate(b.start)?.getTime() ?? 0;
  const end = toDate(b.end)?.getTime() ?? 0;
  const status = end <= now ? 'ended' : start <= now ? 'in_progress' : 'upcoming';
  const color = { ended: 'gray', in_progress: 'teal', upcoming: 'indigo' }[status];
  return (
    <Badge variant="light" color={color} radius="sm" data-testid="booking-status" data-status={status}>
      {t(`bookings.status.${status}`)}
    </Badge>
  );
}

function BookingsTable({ bookings }: { bookings: TBooking[] }) {
  const { t } = useTranslation();
  const now = Date.now();
  return (
    <Card withBorder radius="lg" padding={0}>
      <CardTable minWidth={640} verticalSpacing="sm" horizontalSpacing="md" highlightOnHover data-testid="bookings-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('bookings.summary.item')}</Table.Th>
              <Table.Th>{t('bookings.modal.title')}</Table.Th>
              <Table.Th>{t('bookings.modal.start')}</Table.Th>
              <Table.Th>{t('bookings.modal.end')}</Table.Th>
              <Table.Th>{t('bookings.summary.status')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {bookings.map((b) => (
              <Table.Tr key={b.id} data-testid="booking-row" data-item-id={b.item_id}>
                <Table.Td>
                  <Group gap={8} wrap="nowrap">
                    {b.item_type === 'deployment' ? <IconServer2 size={16} /> : b.item_type === 'pool' ? <IconStack2 size={16} /> : <IconDeviceDesktop size={16} />}
                    <Anchor component={Link} to={itemPath(b)} size="sm" fw={600} data-testid="booking-item-link">
                      {b.item_name}
                    </Anchor>
                  </Group>
                </Table.Td>
                <Table.Td data-label={t('bookings.modal.title')}>
                  <Text size="sm">{builtInText(t, b.title) || '—'}</Text>
                </Table.Td>
                <Table.Td data-label={t('bookings.modal.start')}>
                  <Text size="sm" ff="monospace">
                    {formatLocalDate(b.start)}
                  </Text>
                </Table.Td>
                <Table.Td data-label={t('bookings.modal.end')}>
                  <Text size="sm" ff="monospace">
                    {formatLocalDate(b.end)}
                  </Text>
                </Table.Td>
                <Table.Td data-label={t('bookings.summary.status')}>
                  <StatusBadge b={b} now={now} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </CardTable>
    </Card>
  );
}

/** /booking/summary: all the user's bookings, as a list or in a calendar, each linking to its item's calendar. */
export default function SummaryPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [mode, setMode] = useState<Mode>(() => (localStorage.getItem(MODE_KEY) === 'calendar' ? 'calendar' : 'list'));
  const [now] = useState(() => Date.now());
  // The list: from a week ago to a year ahead; the calendar: what it shows.
  const listRange = useMemo(() => ({ start: new Date(now - 7 * DAY_MS), end: new Date(now + 366 * DAY_MS) }), [now]);
  const [calRange, setCalRange] = useState<{ start: Date; end: Date } | null>(null);
  const range = mode === 'list' ? listRange : (calRange ?? listRange);
  const { data, isLoading, error } = useQuery(userBookingsQuery(range));
  useBookingsLive();
  const change = (v: string) => {
    const m: Mode = v === 'calendar' ? 'calendar' : 'list';
    setMode(m);
    localStorage.setItem(MODE_KEY, m);
  };
  const sorted = useMemo(() => [...(data ?? [])].sort((a, b) => (toDate(a.start)?.getTime() ?? 0) - (toDate(b.start)?.getTime() ?? 0)), [data]);
  const events = useMemo(() => bookingEvents(data ?? [], true, (s) => builtInText(t, s)), [data, t]);

  let content;
  if (mode === 'calendar')
    content = (
      <Card withBorder radius="lg" padding="md">
        <Calendar
          events={events}
          onRange={setCalRange}
          views={['timeGridWeek', 'dayGridMonth', 'listMonth']}
          initialView="dayGridMonth"
          onEventClick={(id) => {
            const b = data?.find((x) => x.id === id);
            if (b) void navigate(itemPath(b));
          }}
          testId="summary-calendar"
        />
      </Card>
    );
  else if (isLoading)
    content = (
      <Card withBorder radius="lg">
        <Stack gap="md">
          {[0, 1, 2].map((i) => (
            <Skeleton key={i} h={20} />
          ))}
        </Stack>
      </Card>
    );
  else if (!sorted.length)
    content = (
      <EmptyState
        icon={<IconCalendarOff size={30} />}
        title={t('bookings.summary.empty_title')}
        body={t('bookings.summary.empty_body')}
        action={
          <Button component={Link} to="/desktops" variant="default">
            {t('bookings.back_to_desktops')}
          </Button>
        }
      />
    );
  else content = <BookingsTable bookings={sorted} />;

  return (
    <>
      <PageHeader
        title={t('bookings.summary.heading')}
        subtitle={t('bookings.summary.subheading')}
        actions={
          <SegmentedControl
            value={mode}
            onChange={change}
            aria-label={t('bookings.summary.view_label')}
            data-testid="summary-view"
            data={(['list', 'calendar'] as const).map((m) => ({
              value: m,
              label: (
                <Tooltip label={t(`bookings.summary.view_${m}`)} withArrow>
                  <Group gap={6} wrap="nowrap" data-testid={`summary-view-${m}`}>
                    {m === 'list' ? <IconLayoutList size={16} /> : <IconCalendar size={16} />}
                    <VisuallyHidden>{t(`bookings.summary.view_${m}`)}</VisuallyHidden>
                  </Group>
                </Tooltip>
              ),
            }))}
          />
        }
      />
      {content}
    </>
  );
}
