import { useMemo, useState } from 'react';
import { Button, Card, Checkbox, CloseButton, Group, SegmentedControl, SimpleGrid, Skeleton, Stack, Text, TextInput, Tooltip, VisuallyHidden } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconDeviceDesktop, IconFilterOff, IconHourglassHigh, IconLayoutGrid, IconList, IconSearch } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import { EmptyState, LoadError } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { desktopsQuery } from '../../entities/desktop/api';
import { DesktopCard } from './DesktopCard';
import { DesktopTable } from './DesktopTable';
import { DirectLinkModal } from './DirectLinkModal';
import { useDesktopsLive, useQueuePositions } from './live';
import { filterDesktops, loadViewMode, saveViewMode, type ViewMode } from '../../entities/desktop/logic';
import { NewTemporaryModal } from './NewTemporaryModal';
import { NewDesktopButton } from '../../entities/domain/DesktopMenuItems';
import classes from './DesktopsPage.module.css';
import { builtInText } from '../../lib/built-in-text';
import { SignInOpener } from './SignInOpener';
import { PoolCards } from './PoolCards';

function GridSkeleton() {
  return (
    <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="desktops-loading">
      {[0, 1, 2].map((i) => (
        <Card key={i} withBorder radius="lg" padding={0}>
          <Skeleton h={0} style={{ aspectRatio: '16 / 9', height: 'auto' }} radius={0} />
          <Stack p="md" gap="sm">
            <Skeleton h={18} w="60%" />
            <Skeleton h={12} w="90%" />
            <Skeleton h={12} w="40%" />
            <Group justify="space-between" mt="sm">
              <Skeleton h={30} w={90} />
              <Skeleton h={30} w={130} />
            </Group>
          </Stack>
        </Card>
      ))}
    </SimpleGrid>
  );
}

function TableSkeleton() {
  return (
    <Card withBorder radius="lg" data-testid="desktops-loading">
      <Stack gap="md">
        {[0, 1, 2, 3].map((i) => (
          <Group key={i} justify="space-between" wrap="nowrap">
            <Group gap="sm" wrap="nowrap" style={{ flex: 1 }}>
              <Skeleton h={36} w={36} />
              <Stack gap={6} style={{ flex: 1 }}>
                <Skeleton h={12} w="40%" />
                <Skeleton h={10} w="60%" />
              </Stack>
            </Group>
            <Skeleton h={24} w={80} />
            <Skeleton h={28} w={160} />
          </Group>
        ))}
      </Stack>
    </Card>
  );
}

export default function DesktopsPage() {
  const { t } = useTranslation();
  const { data: desktops, isLoading, isError, refetch, isRefetching } = useQuery(desktopsQuery);
  useDesktopsLive();
  const queue = useQueuePositions();
  const [view, setView] = useState<ViewMode>(loadViewMode);
  const [text, setText] = useState('');
  const [debounced] = useDebouncedValue(text, 150);
  const [startedOnly, setStartedOnly] = useState(false);
  const [directFor, setDirectFor] = useState<TDesktop | null>(null);
  const [newOpen, setNewOpen] = useState(false);

  const shown = useMemo(() => filterDesktops(desktops ?? [], debounced, startedOnly, (s) => builtInText(t, s)), [desktops, debounced, startedOnly, t]);
  // Keep the modal's desktop current with live updates.
  const direct = directFor ? (desktops?.find((d) => d.id === directFor.id) ?? directFor) : null;
  const changeView = (v: string) => {
    const mode = v === 'table' ? 'table' : 'grid';
    setView(mode);
    saveViewMode(mode);
  };
  const filtering = Boolean(debounced.trim()) || startedOnly;
  const clearFilters = () => {
    setText('');
    setStartedOnly(false);
  };

  const newButton = (
    <Button leftSection={<IconHourglassHigh size={16} />} variant="light" onClick={() => setNewOpen(true)} data-testid="new-temporary">
      {t('desktops.new_temporary')}
    </Button>
  );

  let content;
  if (isLoading) content = view === 'grid' ? <GridSkeleton /> : <TableSkeleton />;
  else if (isError)
    content = (
      <LoadError title={t('desktops.load_error_title')} body={t('desktops.load_error_body')} retrying={isRefetching} onRetry={() => void refetch()} testId="desktops-retry" />
    );
  else if (!desktops?.length)
    content = <EmptyState icon={<IconDeviceDesktop size={30} />} title={t('desktops.empty_title')} body={t('desktops.empty_body')} action={newButton} />;
  else if (!shown.length)
    content = (
      <EmptyState
        icon={<IconFilterOff size={30} />}
        title={t('desktops.no_match_title')}
        body={t('desktops.no_match_body')}
        action={
          <Button variant="default" onClick={clearFilters} data-testid="desktops-clear-filters">
            {t('desktops.clear_filters')}
          </Button>
        }
      />
    );
  else if (view === 'table') content = <DesktopTable desktops={shown} queue={queue} onDirectLink={setDirectFor} />;
  else
    content = (
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="desktops-grid">
        {shown.map((d) => (
          <DesktopCard key={d.id} d={d} queue={queue[d.id]} onDirectLink={setDirectFor} />
        ))}
      </SimpleGrid>
    );

  return (
    <>
      <PageHeader title={t('desktops.heading')} subtitle={t('desktops.subheading')} actions={<><NewDesktopButton />{newButton}</>} />
      <Group className={classes.toolbar} justify="space-between" gap="sm" wrap="wrap">
        <Group gap="md" wrap="wrap" style={{ flex: '1 1 320px' }}>
          <TextInput
            placeholder={t('desktops.filter_placeholder')}
            aria-label={t('desktops.filter_label')}
            leftSection={<IconSearch size={16} />}
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            rightSection={text ? <CloseButton size="sm" onClick={() => setText('')} aria-label={t('desktops.clear_filter')} /> : null}
            style={{ flex: '1 1 220px', maxWidth: 380 }}
            data-testid="desktops-filter"
          />
          <Checkbox label={t('desktops.started_only')} checked={startedOnly} onChange={(e) => setStartedOnly(e.currentTarget.checked)} data-testid="desktops-started-only" />
        </Group>
        <Group gap="sm" wrap="nowrap">
          {desktops && desktops.length > 0 && (
            <Text size="sm" c="dimmed" data-testid="desktops-count">
              {filtering ? t('desktops.count_filtered', { shown: shown.length, count: desktops.length }) : t('desktops.count', { count: desktops.length })}
            </Text>
          )}
          <SegmentedControl
            value={view}
            onChange={changeView}
            data-testid="desktops-view"
            aria-label={t('desktops.view_label')}
            data={[
              {
                value: 'grid',
                label: (
                  <Tooltip label={t('desktops.view_grid')} withArrow>
                    <Group gap={6} wrap="nowrap" data-testid="view-grid">
                      <IconLayoutGrid size={16} />
                      <VisuallyHidden>{t('desktops.view_grid')}</VisuallyHidden>
                    </Group>
                  </Tooltip>
                ),
              },
              {
                value: 'table',
                label: (
                  <Tooltip label={t('desktops.view_table')} withArrow>
                    <Group gap={6} wrap="nowrap" data-testid="view-table">
                      <IconList size={16} />
                      <VisuallyHidden>{t('desktops.view_table')}</VisuallyHidden>
                    </Group>
                  </Tooltip>
                ),
              },
            ]}
          />
        </Group>
      </Group>
      <PoolCards />
      {content}
      <DirectLinkModal desktop={direct} onClose={() => setDirectFor(null)} />
      <NewTemporaryModal opened={newOpen} onClose={() => setNewOpen(false)} />
      <SignInOpener desktops={desktops} />
    </>
  );
}
