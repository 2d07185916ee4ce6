import { useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { Avatar, Badge, Button, Card, CloseButton, Group, Menu, Skeleton, Stack, Switch, Text, TextInput, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  IconCalendarPlus,
  IconChevronDown,
  IconDeviceDesktop,
  IconDotsVertical,
  IconDownload,
  IconEdit,
  IconEye,
  IconEyeOff,
  IconLayoutGrid,
  IconPlayerPlay,
  IconPlayerStop,
  IconRefresh,
  IconSearch,
  IconTrash,
  IconUserCog,
  IconUsersGroup,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDeploymentDesktop, TDeploymentDetail } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { PageHeader } from '../../components/PageHeader';
import { HttpError, isGone } from '../../lib/api';
import { MainActionButton, OpenButton } from '../../entities/desktop/DesktopActions';
import { useDesktopControls } from '../../entities/desktop/controls';
import { StateBadge } from '../../entities/desktop/StateBadge';
import { formatLocalDate } from '../../entities/booking/dates';
import { deploymentKey, deploymentQuery, setDesktopVisible, startAll, stopAll, toggleVisible } from './api';
import { Counts, CreationBar, VisibleBadge } from './DeploymentsPage';
import { DeploymentNotFound } from './NotFound';
import { useDeploymentsLive } from './live';
import { deploymentBookingPath, groupByUser, upsertDesktop, matchesFilter, type UserDesktops } from './logic';
import { CoOwnersModal, CsvModal, DeleteModal, HideModal, RecreateModal, UsersModal } from './modals';
import classes from './Deployments.module.css';
import '../../i18n/areas/deployments';
import { builtInText, useBuiltInText } from '../../lib/built-in-text';

function DesktopLine({ d }: { d: TDeploymentDesktop }) {
  const { t } = useTranslation();
  const c = useDesktopControls(d);
  const qc = useQueryClient();
  const [visible, setVisible] = useState(d.visible);
  useEffect(() => setVisible(d.visible), [d.visible]);
  const toggle = useMutation({
    mutationFn: (v: boolean) => setDesktopVisible(d.id, v),
    onMutate: (v) => setVisible(v),
    // The answer is the truth: into the cache at once, then read again, so that a read or an
    // event that crossed the change on the way cannot leave the switch on the old value.
    onSuccess: (ans) => {
      qc.setQueryData<TDeploymentDetail>(deploymentKey(d.deployment_id), (old) => upsertDesktop(old, { ...d, visible: ans.visible }));
      void qc.invalidateQueries({ queryKey: deploymentKey(d.deployment_id) });
    },
    onError: (err) => {
      setVisible(d.visible);
      handleError(err);
    },
  });
  return (
    <Group justify="space-between" gap="sm" wrap="wrap" className={classes.desktopLine} data-testid="deployment-desktop" data-desktop-id={d.id} data-state={c.state} data-user={d.user_name ?? d.user}>
      <Group gap="sm" wrap="nowrap" style={{ minWidth: 0, flex: '1 1 220px' }}>
        <IconDeviceDesktop size={18} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
        <Text size="sm" fw={500} lineClamp={1} title={builtInText(t, d.name)}>
          {builtInText(t, d.name)}
        </Text>
        <StateBadge status={d.state} size="sm" forceStopAt={d.force_stop_at} />
      </Group>
      <Group gap="sm" wrap="nowrap">
        <Tooltip label={t('deployments.detail.desktop_visible_hint')} withArrow>
          <Switch
            size="sm"
            checked={visible}
            onChange={(e) => toggle.mutate(e.currentTarget.checked)}
            label={t('deployments.detail.desktop_visible')}
            data-testid="deployment-desktop-visible"
          />
        </Tooltip>
        <MainActionButton c={c} size="xs" />
        <OpenButton c={c} size="xs" compact />
      </Group>
    </Group>
  );
}

function UserBlock({ g }: { g: UserDesktops }) {
  const bt = useBuiltInText();
  return (
    <Group className={classes.userRow} p="md" gap="md" wrap="wrap" align="flex-start" data-testid="deployment-user" data-user={g.userName}>
      <Group gap="sm" wrap="nowrap" w={{ base: '100%', sm: 240 }}>
        <Avatar src={g.photo || null} radius="xl" size={36} color="indigo">
          {g.userName.slice(0, 2).toUpperCase()}
        </Avatar>
        <div style={{ minWidth: 0 }}>
          <Text size="sm" fw={600} lineClamp={1}>
            {g.userName}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={1}>
            {bt(g.groupName)}
          </Text>
        </div>
      </Group>
      <Stack gap="xs" style={{ flex: 1, minWidth: 0 }}>
        {g.desktops.map((d) => (
          <DesktopLine key={d.id} d={d} />
        ))}
      </Stack>
    </Group>
  );
}

type Open = 'hide' | 'recreate' | 'csv' | 'delete' | 'users' | 'co_owners' | null;

function Toolbar({ d, onOpen }: { d: TDeploymentDetail; onOpen: (m: Open) => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const start = useMutation({ mutationFn: () => startAll(d.id), onSuccess: () => notifySuccess(t('deployments.detail.starting_all')), onError: (err) => handleError(err) });
  const stop = useMutation({ mutationFn: () => stopAll(d.id), onSuccess: () => notifySuccess(t('deployments.detail.stopping_all')), onError: (err) => handleError(err) });
  const show = useMutation({ mutationFn: () => toggleVisible(d.id, false), onSuccess: () => notifySuccess(t('deployments.detail.shown', { name: d.name })), onError: (err) => handleError(err) });
  const creating = d.creation !== null;
  return (
    <Group gap="xs" wrap="wrap" data-testid="deployment-toolbar">
      <Button leftSection={<IconPlayerPlay size={16} />} color="teal" loading={start.isPending} onClick={() => start.mutate()} disabled={d.totalDesktops === 0} data-testid="deployment-start-all">
        {t('deployments.detail.start_all')}
      </Button>
      <Button leftSection={<IconPlayerStop size={16} />} color="red" variant="light" loading={stop.isPending} onClick={() => stop.mutate()} disabled={d.startedDesktops === 0} data-testid="deployment-stop-all">
        {t('deployments.detail.stop_all')}
      </Button>
      {d.visible ? (
        <Button leftSection={<IconEyeOff size={16} />} variant="default" onClick={() => onOpen('hide')} data-testid="deployment-hide">
          {t('deployments.detail.hide')}
        </Button>
      ) : (
        <Button leftSection={<IconEye size={16} />} variant="default" loading={show.isPending} onClick={() => show.mutate()} data-testid="deployment-show">
          {t('deployments.detail.show')}
        </Button>
      )}
      <Tooltip label={t('deployments.detail.recreate_busy')} disabled={!creating} withArrow>
        <Button leftSection={<IconRefresh size={16} />} variant="default" disabled={creating} onClick={() => onOpen('recreate')} data-testid="deployment-recreate">
          {t('deployments.detail.recreate')}
        </Button>
      </Tooltip>
      {d.needs_booking && (
        <Button component={Link} to={deploymentBookingPath(d.id)} leftSection={<IconCalendarPlus size={16} />} variant="light" color="blue" data-testid="deployment-book">
          {t('deployments.book')}
        </Button>
      )}
      <Button component={Link} to={`/deployment/${encodeURIComponent(d.id)}/videowall`} leftSection={<IconLayoutGrid size={16} />} variant="light" data-testid="deployment-videowall">
        {t('deployments.detail.videowall')}
      </Button>
      <Menu position="bottom-end" shadow="md" width={250} withinPortal>
        <Menu.Target>
          <Button variant="default" rightSection={<IconChevronDown size={14} />} leftSection={<IconDotsVertical size={16} />} data-testid="deployment-more">
            {t('deployments.detail.more')}
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Item leftSection={<IconEdit size={16} />} onClick={() => void navigate(`/deployment/${encodeURIComponent(d.id)}/edit`)} data-testid="deployment-edit">
            {t('deployments.detail.edit')}
          </Menu.Item>
          <Menu.Item leftSection={<IconUsersGroup size={16} />} onClick={() => onOpen('users')} data-testid="deployment-edit-users">
            {t('deployments.detail.edit_users')}
          </Menu.Item>
          <Menu.Item leftSection={<IconDownload size={16} />} onClick={() => onOpen('csv')} data-testid="deployment-csv">
            {t('deployments.detail.csv')}
          </Menu.Item>
          {d.can_change_owners && (
            <Menu.Item leftSection={<IconUserCog size={16} />} onClick={() => onOpen('co_owners')} data-testid="deployment-co-owners">
              {t('deployments.detail.co_owners')}
            </Menu.Item>
          )}
          {d.can_delete && (
            <>
              <Menu.Divider />
              <Menu.Item color="red" leftSection={<IconTrash size={16} />} onClick={() => onOpen('delete')} data-testid="deployment-delete">
                {t('deployments.detail.delete')}
              </Menu.Item>
            </>
          )}
        </Menu.Dropdown>
      </Menu>
    </Group>
  );
}

/** /deployment/{id}: the deployment's desktops, one row per user, live; and what can be done with them. */
export default function DeploymentPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { id = '' } = useParams();
  // Gone or out of reach: the page says so; other failures go to the central handler.
  const q = useQuery({ ...deploymentQuery(id), retry: (n, err) => !(err instanceof HttpError && err.status < 500) && n < 2, meta: { handlesError: isGone } });
  useDeploymentsLive(id);
  const [open, setOpen] = useState<Open>(null);
  const [filter, setFilter] = useState('');
  const d = q.data;
  const groups = useMemo(() => groupByUser(d?.desktops ?? []), [d?.desktops]);
  const shown = groups.filter((g) => matchesFilter(g, filter));

  if (q.isError)
    return (
      <DeploymentNotFound />
    );
  if (!d)
    return (
      <Stack gap="lg" data-testid="deployment-loading">
        <Skeleton h={40} w="40%" />
        <Skeleton h={120} radius="lg" />
        <Skeleton h={240} radius="lg" />
      </Stack>
    );

  const close = () => setOpen(null);
  return (
    <>
      <PageHeader
        title={d.name}
        // The template is said once, in the summary below; the header carries the description only.
        subtitle={d.description || undefined}
        actions={
          <Button variant="subtle" component={Link} to="/deployments" data-testid="deployment-back">
            {t('deployments.back')}
          </Button>
        }
      />
      <Stack gap="lg" data-testid="deployment-detail" data-deployment-id={d.id}>
        <Card withBorder radius="lg" padding={0}>
          <Group justify="space-between" p="md" gap="md" wrap="wrap">
            <Group gap="sm" wrap="wrap">
              <VisibleBadge visible={d.visible} />
              <Badge variant="light" color={d.is_owner ? 'indigo' : 'grape'} radius="sm">
                {t(d.is_owner ? 'deployments.owner' : 'deployments.co_owner')}
              </Badge>
              {d.needs_booking && (
                <>
                  <Badge variant="light" color="blue" radius="sm" data-testid="deployment-needs-booking">
                    {t('deployments.needs_booking')}
                  </Badge>
                  <Text size="sm" fw={500} c={d.next_booking_start ? 'blue' : 'dimmed'} data-testid="deployment-next-booking">
                    {d.next_booking_start
                      ? t('deployments.next_booking', { start: formatLocalDate(d.next_booking_start), end: formatLocalDate(d.next_booking_end) })
                      : t('deployments.no_booking')}
                  </Text>
                </>
              )}
              <Text size="sm" c="dimmed">
                {t('deployments.card.template', { name: builtInText(t, d.template) ?? t('deployments.card.template_gone') })} · {t('deployments.card.desktop_name', { name: builtInText(t, d.desktop_name) })} ·{' '}
                {t('deployments.detail.owner_name', { name: d.user_name ?? d.user })}
              </Text>
            </Group>
            <Toolbar d={d} onOpen={setOpen} />
          </Group>
          {d.creation && (
            <div style={{ padding: '0 var(--mantine-spacing-md) var(--mantine-spacing-md)' }}>
              <CreationBar d={d} size="lg" />
            </div>
          )}
          <Counts d={d} />
        </Card>

        <Card withBorder radius="lg" padding={0}>
          <Group justify="space-between" p="md" gap="sm" wrap="wrap" className={classes.userRow}>
            <Text fw={650}>{t('deployments.detail.desktops_heading', { count: d.desktops.length })}</Text>
            {groups.length > 3 && (
              <TextInput
                placeholder={t('deployments.detail.filter')}
                aria-label={t('deployments.detail.filter')}
                leftSection={<IconSearch size={16} />}
                value={filter}
                onChange={(e) => setFilter(e.currentTarget.value)}
                rightSection={filter ? <CloseButton size="sm" onClick={() => setFilter('')} aria-label={t('deployments.clear_search')} /> : null}
                w={{ base: '100%', xs: 240 }}
                size="xs"
              />
            )}
          </Group>
          {d.desktops.length === 0 ? (
            <Text size="sm" c="dimmed" ta="center" p="xl" data-testid="deployment-no-desktops">
              {d.creation ? t('deployments.detail.no_desktops_yet') : t('deployments.detail.no_desktops')}
            </Text>
          ) : (
            shown.map((g) => <UserBlock key={g.user} g={g} />)
          )}
        </Card>
      </Stack>
      <HideModal d={d} opened={open === 'hide'} onClose={close} />
      <RecreateModal d={d} opened={open === 'recreate'} onClose={close} />
      <CsvModal d={d} opened={open === 'csv'} onClose={close} />
      <UsersModal d={d} opened={open === 'users'} onClose={close} />
      <CoOwnersModal d={d} opened={open === 'co_owners'} onClose={close} />
      <DeleteModal d={d} opened={open === 'delete'} onClose={close} onDeleted={() => void navigate('/deployments')} />
    </>
  );
}
