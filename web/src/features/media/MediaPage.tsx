import { useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { ActionIcon, Badge, Button, CloseButton, Group, Paper, Skeleton, Stack, Table, Tabs, Text, TextInput, ThemeIcon, Tooltip } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { ListTabs } from '../../components/ListTabs';
import { useMutation, useQuery } from '@tanstack/react-query';
import {
  IconDeviceDesktopPlus,
  IconDisc,
  IconFilterOff,
  IconPlus,
  IconRefresh,
  IconSearch,
  IconShare,
  IconTrash,
  IconUsers,
  IconX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TMedia } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState, LoadError } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { abortMedia, ownMediaQuery, retryMedia, sharedMediaQuery } from './api';
import { DeleteMediaModal } from './DeleteMediaModal';
import { ShareMediaModal } from './ShareMediaModal';
import { useMediaLive } from './live';
import { filterMedia, mediaActions, SEARCH_MIN, statusLook } from './logic';
import { formatGb } from '../../entities/format';
import { DownloadProgress, FailureDetail, MediaStatusBadge } from './MediaStatus';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

type Tab = 'own' | 'shared';

function TableSkeleton() {
  return (
    <Paper withBorder radius="lg" p="md" data-testid="media-loading">
      <Stack gap="md">
        {[0, 1, 2].map((i) => (
          <Group key={i} justify="space-between" wrap="nowrap">
            <Group gap="sm" wrap="nowrap" style={{ flex: 1 }}>
              <Skeleton h={36} w={36} />
              <Stack gap={6} style={{ flex: 1 }}>
                <Skeleton h={12} w="40%" />
                <Skeleton h={10} w="60%" />
              </Stack>
            </Group>
            <Skeleton h={22} w={90} />
            <Skeleton h={28} w={120} />
          </Group>
        ))}
      </Stack>
    </Paper>
  );
}

function RowActions({ m, onDelete, onShare }: { m: TMedia; onDelete: (m: TMedia) => void; onShare?: (m: TMedia) => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const abort = useMutation({
    mutationFn: () => abortMedia(m.id),
    onSuccess: () => notifySuccess(t('media.notify.aborting', { name: m.name })),
    onError: (err) => handleError(err),
  });
  const retry = useMutation({
    mutationFn: () => retryMedia(m.id),
    onSuccess: () => notifySuccess(t('media.notify.retrying', { name: m.name })),
    onError: (err) => handleError(err),
  });
  const actions = mediaActions(m);
  return (
    <Group gap={6} justify="flex-end" wrap="nowrap">
      {actions.includes('new_desktop') && (
        <Button
          size="xs"
          variant="light"
          leftSection={<IconDeviceDesktopPlus size={16} />}
          onClick={() => void navigate(`/media/desktop/new?media=${encodeURIComponent(m.id)}`)}
          data-testid="media-new-desktop"
        >
          {t('media.actions.new_desktop')}
        </Button>
      )}
      {actions.includes('abort') && (
        <Button size="xs" variant="light" color="orange" leftSection={<IconX size={16} />} loading={abort.isPending} onClick={() => abort.mutate()} data-testid="media-abort">
          {t('media.actions.abort')}
        </Button>
      )}
      {actions.includes('retry') && (
        <Button size="xs" variant="light" color="indigo" leftSection={<IconRefresh size={16} />} loading={retry.isPending} onClick={() => retry.mutate()} data-testid="media-retry">
          {t('media.actions.retry')}
        </Button>
      )}
      {onShare && m.status !== 'Deleting' && (
        <Tooltip label={t('media.actions.share')} withArrow>
          <ActionIcon variant="subtle" color="indigo" size="lg" onClick={() => onShare(m)} aria-label={t('media.actions.share')} data-testid="media-share">
            <IconShare size={18} />
          </ActionIcon>
        </Tooltip>
      )}
      {actions.includes('delete') && (
        <Tooltip label={t('media.actions.delete')} withArrow>
          <ActionIcon variant="subtle" color="red" size="lg" onClick={() => onDelete(m)} aria-label={t('media.actions.delete')} data-testid="media-delete">
            <IconTrash size={18} />
          </ActionIcon>
        </Tooltip>
      )}
    </Group>
  );
}

function MediaTable({ list, shared, onDelete, onShare }: { list: TMedia[]; shared: boolean; onDelete: (m: TMedia) => void; onShare: (m: TMedia) => void }) {
  const { t, i18n } = useTranslation();
  return (
    <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
      <CardTable minWidth={820} verticalSpacing="sm" horizontalSpacing="md" highlightOnHover data-testid={shared ? 'media-shared-table' : 'media-table'}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('media.columns.name')}</Table.Th>
              <Table.Th>{t('media.columns.kind')}</Table.Th>
              <Table.Th ta="right">{t('media.columns.size')}</Table.Th>
              {shared && <Table.Th>{t('media.columns.owner')}</Table.Th>}
              <Table.Th>{t('media.columns.status')}</Table.Th>
              <Table.Th ta="right">{t('media.columns.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((m) => {
              const look = statusLook(m.status);
              const downloading = look.tone === 'working' && m.status !== 'Deleting';
              return (
                <Table.Tr key={m.id} data-testid="media-row" data-name={m.name} data-status={m.status}>
                  <Table.Td maw={360}>
                    <Group gap="sm" wrap="nowrap" align="flex-start">
                      <ThemeIcon variant="light" radius="md" size={36} color={look.tone === 'ok' ? 'teal' : look.tone === 'failed' ? 'red' : 'indigo'}>
                        <IconDisc size={20} />
                      </ThemeIcon>
                      <Stack gap={2} style={{ minWidth: 0 }}>
                        <Group gap={6} wrap="nowrap">
                          <Text fw={600} size="sm" lineClamp={1} data-testid="media-name">
                            {m.name}
                          </Text>
                          {!shared && m.allowed && Object.values(m.allowed).some((v) => v !== false) && (
                            <Tooltip label={t('media.shared_badge')} withArrow>
                              <ThemeIcon size="sm" variant="transparent" color="gray" aria-label={t('media.shared_badge')}>
                                <IconShare size={14} />
                              </ThemeIcon>
                            </Tooltip>
                          )}
                        </Group>
                        {m.description && (
                          <Text size="xs" c="dimmed" lineClamp={1}>
                            {m.description}
                          </Text>
                        )}
                        <Tooltip label={m.url} withArrow openDelay={400}>
                          <Text size="xs" c="dimmed" truncate="end" maw={300} ff="monospace">
                            {m.url}
                          </Text>
                        </Tooltip>
                      </Stack>
                    </Group>
                  </Table.Td>
                  <Table.Td data-label={t('media.columns.kind')}>
                    <Badge variant="outline" color="gray" radius="sm" data-testid="media-kind">
                      {t(`media.kinds.${m.kind}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td ta="right" style={{ whiteSpace: 'nowrap' }} data-testid="media-size" data-label={t('media.columns.size')}>
                    {m.size > 0 ? t('media.size_gb', { size: formatGb(m.size, i18n.language) }) : '—'}
                  </Table.Td>
                  {shared && (
                    <Table.Td data-label={t('media.columns.owner')}>
                      <Text size="sm">{m.user_name ?? m.user}</Text>
                      <Text size="xs" c="dimmed">
                        {[m.group_name, m.category_name].filter(Boolean).map((x) => builtInText(t, x)).join(' · ')}
                      </Text>
                    </Table.Td>
                  )}
                  <Table.Td miw={220} data-label={t('media.columns.status')}>
                    <Stack gap={6} align="flex-start">
                      <MediaStatusBadge status={m.status} size="sm" />
                      {downloading && <DownloadProgress m={m} />}
                      <FailureDetail m={m} />
                    </Stack>
                  </Table.Td>
                  <Table.Td>
                    <RowActions m={m} onDelete={onDelete} onShare={shared ? undefined : onShare} />
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </CardTable>
    </Paper>
  );
}

export default function MediaPage() {
  const { t } = useTranslation();
  const own = useQuery(ownMediaQuery);
  const shared = useQuery(sharedMediaQuery);
  useMediaLive();
  const [tab, setTab] = useState<Tab>('own');
  const [text, setText] = useState('');
  const [toDelete, setToDelete] = useState<TMedia | null>(null);
  const [toShare, setToShare] = useState<TMedia | null>(null);

  const query = tab === 'own' ? own : shared;
  const all = useMemo(() => query.data ?? [], [query.data]);
  const shown = useMemo(() => filterMedia(all, text), [all, text]);
  const searching = text.trim().length >= SEARCH_MIN;

  const newMedia = (testId: string) => (
    <Button component={Link} to="/media/new" leftSection={<IconPlus size={16} />} data-testid={testId}>
      {t('media.new')}
    </Button>
  );

  let content;
  if (query.isLoading) content = <TableSkeleton />;
  else if (query.isError)
    content = (
      <LoadError title={t('media.load_error_title')} body={t('media.load_error_body')} retrying={query.isRefetching} onRetry={() => void query.refetch()} />
    );
  else if (all.length === 0)
    content =
      tab === 'own' ? (
        <EmptyState icon={<IconDisc size={30} />} title={t('media.empty_title')} body={t('media.empty_body')} action={newMedia('media-new-empty')} />
      ) : (
        <EmptyState icon={<IconUsers size={30} />} title={t('media.shared_empty_title')} body={t('media.shared_empty_body')} />
      );
  else if (shown.length === 0)
    content = (
      <EmptyState
        icon={<IconFilterOff size={30} />}
        title={t('media.no_match_title')}
        body={t('media.no_match_body')}
        action={
          <Button variant="default" onClick={() => setText('')}>
            {t('media.clear_search')}
          </Button>
        }
      />
    );
  else content = <MediaTable list={shown} shared={tab === 'shared'} onDelete={setToDelete} onShare={setToShare} />;


  return (
    <>
      <PageHeader
        title={t('media.heading')}
        subtitle={t('media.subheading')}
        actions={
          <>
            <Button component={Link} to="/media/desktop/new" variant="default" leftSection={<IconDeviceDesktopPlus size={16} />} data-testid="media-new-desktop-header">
              {t('media.new_desktop')}
            </Button>
            {newMedia('media-new')}
          </>
        }
      />
      <Group justify="space-between" align="flex-end" mb="lg" gap="md" wrap="wrap">
        <Tabs value={tab} onChange={(v) => setTab(v === 'shared' ? 'shared' : 'own')}>
          <ListTabs
            tabs={[
              { value: 'own', label: t('media.tabs.own'), icon: <IconDisc size={16} />, count: own.data?.length, testId: 'media-tab-own' },
              { value: 'shared', label: t('media.tabs.shared'), icon: <IconUsers size={16} />, count: shared.data?.length, testId: 'media-tab-shared' },
            ]}
          />
        </Tabs>
        <TextInput
          placeholder={t('media.search_placeholder')}
          aria-label={t('media.search_label')}
          description={text.trim().length > 0 && !searching ? t('media.search_min', { min: SEARCH_MIN }) : undefined}
          inputWrapperOrder={['label', 'input', 'description']}
          leftSection={<IconSearch size={16} />}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          rightSection={text ? <CloseButton size="sm" onClick={() => setText('')} aria-label={t('media.clear_search')} /> : null}
          w={{ base: '100%', sm: 320 }}
          data-testid="media-search"
        />
      </Group>
      {content}
      <DeleteMediaModal media={toDelete} onClose={() => setToDelete(null)} />
      <ShareMediaModal media={toShare} onClose={() => setToShare(null)} />
    </>
  );
}
