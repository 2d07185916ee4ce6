import { Badge, Loader, Tooltip } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { stateView } from './logic';

/** The desktop's state, coloured; states outside the table show as working, with a spinner. */
export function StateBadge({ status, size = 'md' }: { status: string; size?: 'sm' | 'md' | 'lg' }) {
  const { t } = useTranslation();
  const v = stateView(status);
  const badge = (
    <Badge
      color={v.color}
      variant={v.shown === 'started' ? 'filled' : 'light'}
      size={size}
      radius="sm"
      leftSection={v.busy ? <Loader size={10} color={v.shown === 'started' ? 'white' : v.color} /> : null}
      data-testid="desktop-state"
      data-state={v.state}
      style={{ flex: '0 0 auto', maxWidth: 'none' }}
      styles={{ label: { overflow: 'visible' } }}
    >
      {t(`desktops.states.${v.shown}`)}
    </Badge>
  );
  return v.shown !== v.state ? (
    <Tooltip label={t(`desktops.states_detail.${v.state}`, { defaultValue: t('desktops.states.working') })} withArrow>
      {badge}
    </Tooltip>
  ) : (
    badge
  );
}
