import { useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Anchor, Badge, Button, Card, CloseButton, Group, Progress, SimpleGrid, Skeleton, Stack, Text, TextInput, Tooltip } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconCalendarEvent, IconEye, IconEyeOff, IconPlus, IconSearch, IconTemplate, IconUser, IconUsersGroup, IconDeviceDesktop } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDeployment } from '@vdi/contracts';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { deploymentsQuery } from './api';
import { useDeploymentsLive } from './live';
import { creationPercent, deploymentBookingPath } from './logic';
import classes from './Deployments.module.css';
import '../../i18n/areas/deployments';
import { builtInText } from '../../lib/built-in-text';

/** Visible or not, as a badge. */
export function VisibleBadge({ visible }: { visible: boolean }) {
  const { t } = useTranslation();
  return (
    <Tooltip label={t(visible ? 'deployments.visible_hint' : 'deployments.hidden_hint')} withArrow>
      <Badge
        variant="light"
        color={visible ? 'teal' : 'gray'}
        radius="sm"
        leftSection={visible ? <IconEye size={12} /> : <IconEyeOff size={12} />}
        data-testid="deployment-visible"
        data-visible={visible}
        style={{ flex: '0 0 auto' }}
      >
        {t(visible ? 'deployments.visible' : 'deployments.hidden')}
      </Badge>
    </Tooltip>
  );
}

/** Started, visible and total desktops. */
export function Counts({ d }: { d: Pick<TDeployment, 'startedDesktops' | 'visibleDesktops' | 'totalDesktops'> }) {
  const { t } = useTranslation();
  const cell = (value: number, key: string, color?: string) => (
    <div className={classes.count} data-testid={`deployment-count-${key}`} data-value={value}>
      <Text fw={700} size="lg" c={color}>
        {value}
      </Text>
      <Text size="xs" c="dimmed">
        {t(`deployments.counts.${key}`)}
      </Text>
    </div>
  );
  return (
    <SimpleGrid cols={3} spacing={0} py="xs" className={classes.counts}>
      {cell(d.startedDesktops, 'started', d.startedDesktops ? 'teal' : undefined)}
      {cell(d.visibleDesktops, 'visible')}
      {cell(d.totalDesktops, 'total')}
    </SimpleGrid>
  );
}

/** The creation job as a bar: desktops made of the total. */
export function CreationBar({ d, size = 'sm' }: { d: Pick<TDeployment, 'creation'>; size?: 'sm' | 'md' | 'lg' }) {
  const { t } = useTranslation();
  const c = d.creation;
  if (!c) return null;
  const percent = creationPercent(c);
  return (
    <Stack gap={4} data-testid="deployment-creating" data-percent={percent}>
      <Group justify="space-between" gap="xs">
        <Text size="xs" fw={600} c="indigo">
          {t('deployments.creating', { created: c.created + c.failed, total: c.total })}
        </Text>
        <Text size="xs" c="dimmed">
          {percent}%
        </Text>
      </Group>
      <Progress value={percent} size={size} radius="xl" striped animated aria-label={t('deployments.creating_label')} />
      {c.failed > 0 && (
        <Text size="xs" c="red">
          {t('deployments.creation_failed', { count: c.failed })}
        </Text>
      )}
    </Stack>
  );
}

function DeploymentCard({ d }: { d: TDeployment }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  // The card is a link already: the book link inside it is a span that navigates on its own.
  const book = (e: { preventDefault: () => void; stopPropagation: () => void }) => {
    e.preventDefault();
    e.stopPropagation();
    void navigate(deploymentBookingPath(d.id));
  };
  return (
    <Card
      withBorder
      radius="lg"
      padding={0}
      className={`${classes.card} ${classes.cardLink}`}
      component={Link}
      to={`/deployment/${encodeURIComponent(d.id)}`}
      data-testid="deployment-card"
      data-name={d.name}
      data-deployment-id={d.id}
    >
      <Stack gap={8} p="md" style={{ flex: 1 }}>
        <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
          <Text fw={650} size="md" lineClamp={1} title={d.name} data-testid="deployment-name">
            {d.name}
          </Text>
          <VisibleBadge visible={d.visible} />
        </Group>
        <Text size="sm" c="dimmed" lineClamp={2} mih={40} mt={-4}>
          {d.description || t('deployments.no_description')}
        </Text>
        <Group gap={6} wrap="nowrap">
          <IconTemplate size={14} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed" lineClamp={1}>
            {t('deployments.card.template', { name: builtInText(t, d.template) ?? t('deployments.card.template_gone') })}
          </Text>
        </Group>
        <Group gap={6} wrap="nowrap">
          <IconDeviceDesktop size={14} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed" lineClamp={1} data-testid="deployment-desktop-name">
            {t('deployments.card.desktop_name', { name: d.desktop_name })}
          </Text>
        </Group>
        {d.needs_booking && (
          <Group gap={6} wrap="nowrap">
            <IconCalendarEvent size={14} color="var(--mantine-color-blue-6)" style={{ flex: '0 0 auto' }} />
            <Text size="xs" c="dimmed" lineClamp={1}>
              {t('deployments.needs_booking')}
            </Text>
            <Anchor
              component="span"
              role="link"
              tabIndex={0}
              size="xs"
              fw={600}
              onClick={book}
              onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && book(e)}
              style={{ flex: '0 0 auto' }}
              data-testid="deployment-card-book"
            >
              {t('deployments.book')}
            </Anchor>
          </Group>
        )}
        <CreationBar d={d} />
      </Stack>
      <Counts d={d} />
      <Group justify="space-between" p="sm" px="md" gap="xs" wrap="nowrap">
        <Group gap={6} wrap="nowrap" style={{ minWidth: 0 }}>
          <IconUser size={14} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed" lineClamp={1}>
            {d.user_name ?? d.user}
          </Text>
        </Group>
        <Badge variant="light" color={d.is_owner ? 'indigo' : 'grape'} size="sm" radius="sm" leftSection={d.is_owner ? <IconUser size={11} /> : <IconUsersGroup size={11} />} data-testid="deployment-role" style={{ flex: '0 0 auto' }}>
          {t(d.is_owner ? 'deployments.owner' : 'deployments.co_owner')}
        </Badge>
      </Group>
    </Card>
  );
}

function GridSkeleton() {
  return (
    <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="deployments-loading">
      {[0, 1, 2].map((i) => (
        <Card key={i} withBorder radius="lg">
          <Stack gap="sm">
            <Skeleton h={18} w="60%" />
            <Skeleton h={12} w="90%" />
            <Skeleton h={12} w="50%" />
            <Skeleton h={48} mt="sm" />
          </Stack>
        </Card>
      ))}
    </SimpleGrid>
  );
}

/** /deployments: the caller's deployments (owned and co-owned) as cards, live. */
export default function DeploymentsPage() {
  const { t } = useTranslation();
  const list = useQuery(deploymentsQuery);
  useDeploymentsLive();
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 150);
  const all = useMemo(() => list.data ?? [], [list.data]);
  const shown = useMemo(() => {
    const q = term.trim().toLowerCase();
    return q ? all.filter((d) => `${d.name} ${d.description} ${d.template ?? ''} ${builtInText(t, d.template) ?? ''} ${d.desktop_name}`.toLowerCase().includes(q)) : all;
  }, [all, term, t]);

  const newButton = (
    <Button component={Link} to="/deployments/new" leftSection={<IconPlus size={16} />} data-testid="deployment-new">
      {t('deployments.new_button')}
    </Button>
  );

  let body;
  if (list.isLoading) body = <GridSkeleton />;
  else if (!all.length)
    body = <EmptyState icon={<IconUsersGroup size={30} />} title={t('deployments.empty_title')} body={t('deployments.empty_body')} action={newButton} />;
  else if (!shown.length)
    body = (
      <Text size="sm" c="dimmed" ta="center" py="xl" data-testid="deployments-no-match">
        {t('deployments.no_match')}
      </Text>
    );
  else
    body = (
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="deployments-grid">
        {shown.map((d) => (
          <DeploymentCard key={d.id} d={d} />
        ))}
      </SimpleGrid>
    );

  return (
    <>
      <PageHeader
        title={t('deployments.heading')}
        subtitle={t('deployments.subheading')}
        actions={
          <>
            {all.length > 0 && (
              <TextInput
                placeholder={t('deployments.search')}
                aria-label={t('deployments.search')}
                leftSection={<IconSearch size={16} />}
                value={search}
                onChange={(e) => setSearch(e.currentTarget.value)}
                rightSection={search ? <CloseButton size="sm" onClick={() => setSearch('')} aria-label={t('deployments.clear_search')} /> : null}
                w={{ base: '100%', xs: 240 }}
                data-testid="deployments-search"
              />
            )}
            {all.length > 0 && newButton}
          </>
        }
      />
      {body}
    </>
  );
}
