import { Link } from 'react-router';
import { Anchor, Menu } from '@mantine/core';
import { IconCalendarPlus } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import '../../i18n/areas/bookings';

export const bookingPath = (d: Pick<TDesktop, 'id'>) => `/booking/desktop/${encodeURIComponent(d.id)}`;

/** Desktops of a deployment are booked with their deployment, by its owners. */
const bookable = (d: TDesktop) => d.needs_booking && !d.tag;

/** The "book" action of a desktop that needs a booking: its calendar. */
export function BookLink({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  if (!bookable(d)) return null;
  return (
    <Anchor component={Link} to={bookingPath(d)} size="xs" fw={600} data-testid="desktop-book">
      {t('bookings.book')}
    </Anchor>
  );
}

export function BookMenuItem({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  if (!bookable(d)) return null;
  return (
    <Menu.Item component={Link} to={bookingPath(d)} leftSection={<IconCalendarPlus size={16} />} data-testid="desktop-book-menu">
      {t('bookings.book')}
    </Menu.Item>
  );
}
