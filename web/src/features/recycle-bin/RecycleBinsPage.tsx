import { ActionIcon, Alert, Anchor, Badge, Button, Group, Paper, Table, Text, ThemeIcon, Tooltip } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import {
  IconArrowBackUp,
  IconClockHour4,
  IconDatabase,
  IconDeviceDesktop,
  IconInfoCircle,
  IconLayoutGrid,
  IconRecycle,
  IconTemplate,
  IconTrash,
  IconTrashX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TRecycleBinItem } from '@vdi/contracts';
import { EmptyState, LoadError, ListSkeleton } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { formatEpoch, formatGb } from '../../entities/format';
import { useBinActions } from './actions';
import { binQuery, cutoffQuery, useRecycleBinLive } from './api';
import { humaniseHours, itemTypeKey } from './logic';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

export const TYPE_ICON: Record<string, typeof IconDeviceDesktop> = {
  desktop: IconDeviceDesktop,
  template: IconTemplate,
  deployment: IconLayoutGrid,
};

/** "1 desktop · 1 disk": what an entry holds. */
export function Contents({ item }: { item: Pick<TRecycleBinItem, 'desktops' | 'templates' | 'deployments' | 'storages'> }) {
  const { t } = useTranslation();
  const parts: [number, typeof IconDeviceDesktop, string][] = [
    [item.desktops, IconDeviceDesktop, 'desktops'],
    [item.templates, IconTemplate, 'templates'],
    [item.deployments, IconLayoutGrid, 'deployments'],
    [item.storages, IconDatabase, 'storages'],
  ];
  return (
    <Group gap={6} wrap="nowrap" data-testid="bin-contents">
      {parts
        .filter(([n]) => n > 0)
        .map(([n, Icon, key]) => (
          <Tooltip key={key} label={t(`recycle_bin.counts.${key}`, { count: n })} withArrow>
            <Badge variant="light" color="gray" radius="sm" leftSection={<Icon size={12} />}>
              {n}
            </Badge>
          </Tooltip>
        ))}
    </Group>
  );
}

export const sizeText = formatGb;

/** The retention, as the spec asks: humanised hours, or "deleted at once". */
export function CutoffNotice() {
  const { t, i18n } = useTranslation();
  const { data: hours } = useQuery(cutoffQuery);
  if (hours === undefined) return null;
  return (
    <Alert variant="light" color={hours === 0 ? 'orange' : 'blue'} icon={<IconClockHour4 size={18} />} mb="lg" data-testid="bin-cutoff">
      {hours === 0 ? t('recycle_bin.cutoff_immediate') : t('recycle_bin.cutoff', { time: humaniseHours(hours, i18n.language) })}
    </Alert>
  );
}

function Row({ item, actions }: { item: TRecycleBinItem; actions: ReturnType<typeof useBinActions> }) {
  const { t, i18n } = useTranslation();
  const Icon = TYPE_ICON[item.item_type] ?? IconRecycle;
  return (
    <Table.Tr data-testid="bin-row" data-entry-id={item.id} data-name={item.item_name}>
      <Table.Td>
        <Group gap="sm" wrap="nowrap">
          <ThemeIcon variant="light" radius="md" size={36} color="gray">
            <Icon size={20} />
          </ThemeIcon>
          <div style={{ minWidth: 0 }}>
            <Anchor component={Link} to={`/recyclebin/${item.id}`} fw={600} size="sm" lineClamp={1} data-testid="bin-name">
              {builtInText(t, item.item_name)}
            </Anchor>
            <Text size="xs" c="dimmed">
              {t(itemTypeKey(item.item_type))}
            </Text>
          </div>
        </Group>
      </Table.Td>
      <Table.Td data-label={t('recycle_bin.columns.agent')}>
        <Text size="sm">{item.agent_name}</Text>
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('recycle_bin.columns.when')}>
        <Text size="sm">{formatEpoch(item.accessed)}</Text>
        {item.expires && (
          <Text size="xs" c="dimmed">
            {t('recycle_bin.expires', { date: formatEpoch(item.expires) })}
          </Text>
        )}
      </Table.Td>
      <Table.Td data-label={t('recycle_bin.columns.contents')}>
        <Contents item={item} />
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('recycle_bin.columns.size')}>
        <Text size="sm">{t('storage.gb', { value: sizeText(item.size, i18n.language) })}</Text>
      </Table.Td>
      <Table.Td>
        <Group gap={6} wrap="nowrap" justify="flex-end">
          <Button
            size="xs"
            variant="light"
            color="teal"
            leftSection={<IconArrowBackUp size={14} />}
            loading={actions.restoring(item.id)}
            disabled={actions.busy(item.id)}
            onClick={() => actions.restore(item)}
            data-testid="bin-restore"
          >
            {t('recycle_bin.actions.restore')}
          </Button>
          <Tooltip label={t('recycle_bin.actions.delete')} withArrow>
            <ActionIcon
              variant="light"
              color="red"
              size={30}
              loading={actions.deleting(item.id)}
              disabled={actions.busy(item.id)}
              onClick={() => actions.remove(item)}
              aria-label={t('recycle_bin.actions.delete_named', { name: builtInText(t, item.item_name) })}
              data-testid="bin-delete"
            >
              <IconTrash size={16} />
            </ActionIcon>
          </Tooltip>
          <Tooltip label={t('recycle_bin.actions.info')} withArrow>
            <ActionIcon component={Link} to={`/recyclebin/${item.id}`} variant="subtle" color="gray" size={30} aria-label={t('recycle_bin.actions.info')} data-testid="bin-info">
              <IconInfoCircle size={16} />
            </ActionIcon>
          </Tooltip>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

export default function RecycleBinsPage() {
  const { t } = useTranslation();
  const { data: items, isLoading, isError, refetch, isRefetching } = useQuery(binQuery);
  useRecycleBinLive();
  const actions = useBinActions();

  let content;
  if (isLoading)
    content = (
      <ListSkeleton testId="bin-loading" columns={[{ w: 36, h: 36 }, { w: 'flex', h: 12 }, { w: 160, h: 24 }]} />
    );
  else if (isError)
    content = (
      <LoadError title={t('recycle_bin.load_error_title')} body={t('recycle_bin.load_error_body')} retrying={isRefetching} onRetry={() => void refetch()} />
    );
  else if (!items?.length) content = <EmptyState icon={<IconRecycle size={30} />} title={t('recycle_bin.empty_title')} body={t('recycle_bin.empty_body')} />;
  else
    content = (
      <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
        <CardTable minWidth={880} verticalSpacing="sm" horizontalSpacing="md" highlightOnHover data-testid="bin-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('recycle_bin.columns.item')}</Table.Th>
                <Table.Th>{t('recycle_bin.columns.agent')}</Table.Th>
                <Table.Th>{t('recycle_bin.columns.when')}</Table.Th>
                <Table.Th>{t('recycle_bin.columns.contents')}</Table.Th>
                <Table.Th>{t('recycle_bin.columns.size')}</Table.Th>
                <Table.Th w={1} />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((item) => (
                <Row key={item.id} item={item} actions={actions} />
              ))}
            </Table.Tbody>
          </CardTable>
      </Paper>
    );

  return (
    <>
      <PageHeader
        title={t('recycle_bin.heading')}
        subtitle={t('recycle_bin.subheading')}
        actions={
          <>
            {items && items.length > 0 && (
              <Text size="sm" c="dimmed" data-testid="bin-count">
                {t('recycle_bin.count', { count: items.length })}
              </Text>
            )}
            <Button
              color="red"
              variant="light"
              leftSection={<IconTrashX size={16} />}
              disabled={!items?.length}
              loading={actions.emptying}
              onClick={() => actions.empty(items?.length ?? 0)}
              data-testid="bin-empty"
            >
              {t('recycle_bin.actions.empty')}
            </Button>
          </>
        }
      />
      <CutoffNotice />
      {content}
    </>
  );
}
