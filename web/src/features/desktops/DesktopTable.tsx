import { Group, Paper, Stack, Table, Text, ThemeIcon } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { IconDeviceDesktop } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import { ActionsRow } from '../../entities/desktop/DesktopActions';
import { DesktopNotices, Hardware } from './DesktopCard';
import { useDesktopControls } from '../../entities/desktop/controls';
import type { QueueMap } from '../../entities/desktop/logic';
import { StateBadge } from '../../entities/desktop/StateBadge';
import { builtInText } from '../../lib/built-in-text';

function Row({ d, queue, onDirectLink }: { d: TDesktop; queue?: number; onDirectLink: (d: TDesktop) => void }) {
  const { t } = useTranslation();
  const c = useDesktopControls(d);
  return (
    <Table.Tr data-testid="desktop-row" data-desktop-id={d.id} data-name={d.name} data-state={c.state}>
      <Table.Td>
        <Group gap="sm" wrap="nowrap" align="flex-start">
          <ThemeIcon variant="light" radius="md" size={36} color={c.state === 'started' ? 'teal' : 'gray'}>
            <IconDeviceDesktop size={20} />
          </ThemeIcon>
          <Stack gap={4} style={{ minWidth: 0 }}>
            <div>
              <Text fw={600} size="sm" lineClamp={1} data-testid="desktop-name">
                {builtInText(t, d.name)}
              </Text>
              <Text size="xs" c="dimmed" lineClamp={1}>
                {builtInText(t, d.description) || t('desktops.no_description')}
              </Text>
            </div>
            <DesktopNotices d={d} queue={queue} inline />
          </Stack>
        </Group>
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('desktops.columns.state')}>
        <StateBadge status={d.state} size="sm" forceStopAt={d.force_stop_at} />
      </Table.Td>
      <Table.Td data-label={t('desktops.columns.hardware')}>
        <Hardware d={d} />
      </Table.Td>
      <Table.Td>
        <ActionsRow c={c} d={d} onDirectLink={onDirectLink} compact />
      </Table.Td>
    </Table.Tr>
  );
}

export function DesktopTable({ desktops, queue, onDirectLink }: { desktops: TDesktop[]; queue: QueueMap; onDirectLink: (d: TDesktop) => void }) {
  const { t } = useTranslation();
  return (
    <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
      <CardTable minWidth={760} verticalSpacing="sm" horizontalSpacing="md" highlightOnHover data-testid="desktops-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('desktops.columns.name')}</Table.Th>
              <Table.Th>{t('desktops.columns.state')}</Table.Th>
              <Table.Th>{t('desktops.columns.hardware')}</Table.Th>
              <Table.Th w={1} ta="right">
                {t('desktops.columns.actions')}
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {desktops.map((d) => (
              <Row key={d.id} d={d} queue={queue[d.id]} onDirectLink={onDirectLink} />
            ))}
          </Table.Tbody>
        </CardTable>
    </Paper>
  );
}
