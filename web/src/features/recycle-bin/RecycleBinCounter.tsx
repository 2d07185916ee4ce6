import { Badge } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { binCountQuery, useRecycleBinLive } from './api';

/** The number of entries in my bin, for the navigation; kept current by the live events. */
export function RecycleBinCounter() {
  const { t } = useTranslation();
  const { data: count } = useQuery(binCountQuery);
  useRecycleBinLive();
  if (!count) return null;
  return (
    <Badge size="xs" circle={count < 10} color="red" variant="filled" aria-label={t('recycle_bin.count', { count })} data-testid="bin-counter">
      {count > 99 ? '99+' : count}
    </Badge>
  );
}
