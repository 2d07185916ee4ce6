import { Group, Text, type GroupProps } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { AVAILABILITY_COLORS, BOOKING_COLOR, PAST_BOOKING_COLOR } from '../../entities/booking/logic';
import classes from '../../entities/booking/Calendar.module.css';
import '../../i18n/areas/bookings';

const Swatch = ({ color, faint = false }: { color: string; faint?: boolean }) => (
  <span className={classes.legend} style={{ background: color, opacity: faint ? 0.45 : 1 }} />
);

/** What the colours of a booking calendar mean. */
export function Legend({ bookings = true, ...props }: GroupProps & { bookings?: boolean }) {
  const { t } = useTranslation();
  const items: { key: string; color: string; faint?: boolean }[] = [
    ...(['available', 'overridable', 'unavailable'] as const).map((k) => ({ key: k, color: AVAILABILITY_COLORS[k], faint: true })),
    ...(bookings
      ? [
          { key: 'booking', color: BOOKING_COLOR },
          { key: 'past', color: PAST_BOOKING_COLOR },
        ]
      : []),
  ];
  return (
    <Group gap="md" wrap="wrap" data-testid="calendar-legend" {...props}>
      {items.map((i) => (
        <Group key={i.key} gap={6} wrap="nowrap">
          <Swatch color={i.color} faint={i.faint} />
          <Text size="xs" c="dimmed">
            {t(`bookings.legend.${i.key}`)}
          </Text>
        </Group>
      ))}
    </Group>
  );
}
