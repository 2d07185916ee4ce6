import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { Anchor, Badge, Box, Button, Center, Group, Paper, SimpleGrid, Skeleton, Stack, Table, Text, ThemeIcon, Timeline, Title } from '@mantine/core';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { notifications } from '@mantine/notifications';
import {
  IconAlertTriangle, IconArrowLeft, IconDeviceDesktop, IconEdit, IconEye, IconHeadset, IconPlayerPlay, IconPlayerStop, IconPower, IconRefresh, IconSparkles, IconTrash, IconHistory, IconUserShare,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AT_REST, GUEST_UP, ON_HYPERVISOR, statusIn, VIEWABLE, type TAdminActionAnswer, type TAdminDesktopAction, type TAdminDesktopDetail, type TDesktopHistoryItem } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { isGone } from '../../../lib/api';
import { EmptyState } from '../../../components/EmptyState';
import { StateBadge } from '../../../entities/desktop/StateBadge';
import { useScreenshotUrl } from '../../../entities/desktop/use-screenshot';
import { formatBytes, formatDuration } from '../../../entities/format';
import { openViewer } from '../../../entities/viewer/open';
import { builtInText } from '../../../lib/built-in-text';
import { ConfirmModal, useCodeText } from '../shared/console';
import { Uptime, useNow } from './DesktopRow';
import { desktopAction, desktopDetailQuery, desktopHistoryQuery, refreshContent, supportViewer, updateDesktop } from './api';
import { ChangeOwnerModal } from './owner';
import '../../../i18n/areas/admin-desktops';
import '../../../i18n/areas/admin-system';

/** Actions that ask first (they lose unsaved work or delete). */
const CONFIRMED: TAdminDesktopAction[] = ['force_stop', 'reset', 'delete'];
export const THUMBNAIL_REFRESH_MS = 3000;

/** /isard-admin/desktops/:id: one desktop's facts, screen, bookings and history, with the actions the console has on it. */
export default function DesktopPage() {
  const { t } = useTranslation();
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const codeText = useCodeText();
  const detail = useQuery(desktopDetailQuery(id));
  const history = useInfiniteQuery(desktopHistoryQuery(id));
  const [confirm, setConfirm] = useState<TAdminDesktopAction | null>(null);
  const [support, setSupport] = useState(false);
  const [moving, setMoving] = useState(false);
  const [busy, setBusy] = useState(false);
  const d = detail.data;

  async function run(action: TAdminDesktopAction) {
    if (!d) return;
    const answer: TAdminActionAnswer = await desktopAction(action, [d.id]);
    await refreshContent();
    const refused = answer.results.find((r) => !r.ok);
    if (refused) return notifyRefusal(codeText(refused.description_code ?? 'generic_error', refused.params));
    notifySuccess(t('admin_desktops.desktops.result_done', { action: t(`admin_desktops.desktops.${action}`), count: 1 }));
    if (action === 'delete') void navigate('/isard-admin/desktops');
  }
  const ask = (action: TAdminDesktopAction) => {
    if (CONFIRMED.includes(action)) return setConfirm(action);
    setBusy(true);
    run(action)
      .catch(handleError)
      .finally(() => setBusy(false));
  };

  const back = (
    <Anchor component={Link} to="/isard-admin/desktops" size="sm" data-testid="desktop-page-back">
      <Group gap={4} wrap="nowrap">
        <IconArrowLeft size={14} />
        {t('admin_desktops.page.back')}
      </Group>
    </Anchor>
  );

  if (detail.isPending) {
    return (
      <Stack gap="md" data-testid="desktop-page-loading">
        {back}
        <Skeleton h={40} w="50%" radius="md" />
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Skeleton h={220} radius="lg" />
          <Skeleton h={220} radius="lg" />
        </SimpleGrid>
      </Stack>
    );
  }
  if (!d) {
    return (
      <Stack gap="md">
        {back}
        <EmptyState
          icon={<IconDeviceDesktop size={28} />}
          title={t(isGone(detail.error) ? 'admin_desktops.page.not_found' : 'admin_desktops.common.load_failed')}
          action={
            isGone(detail.error) ? undefined : (
              <Button variant="light" onClick={() => void detail.refetch()} data-testid="desktop-page-retry">
                {t('admin_desktops.common.retry')}
              </Button>
            )
          }
        />
      </Stack>
    );
  }

  const running = statusIn(ON_HYPERVISOR, d.status);
  const name = builtInText(t, d.name);
  return (
    <Stack gap="md" data-testid="desktop-page" data-status={d.status} data-id={d.id}>
      {back}
      <Group justify="space-between" align="flex-start" wrap="wrap" gap="md">
        <Stack gap={4} style={{ minWidth: 0 }}>
          <Group gap="sm" wrap="wrap">
            <Title order={1} size="h2" style={{ overflowWrap: 'anywhere' }} data-testid="desktop-page-name">
              {name}
            </Title>
            <StateBadge status={d.status} forceStopAt={d.force_stop_at} />
            {!d.persistent && (
              <Badge variant="outline" color="gray" radius="sm">
                {t('admin_desktops.desktops.temporary')}
              </Badge>
            )}
          </Group>
          {d.description && (
            <Text c="dimmed" size="sm">
              {builtInText(t, d.description)}
            </Text>
          )}
        </Stack>
        <Group gap="xs" wrap="wrap" data-testid="desktop-page-actions">
          {d.status === 'Stopped' && (
            <Button size="sm" leftSection={<IconPlayerPlay size={16} />} loading={busy} onClick={() => ask('start')} data-testid="desktop-page-start">
              {t('admin_desktops.desktops.start')}
            </Button>
          )}
          {running && (
            <Button size="sm" variant="default" leftSection={<IconPlayerStop size={16} />} loading={busy} onClick={() => ask('stop')} data-testid="desktop-page-stop">
              {t('admin_desktops.desktops.stop')}
            </Button>
          )}
          {(running || d.status === 'Starting') && (
            <Button size="sm" variant="default" color="orange" leftSection={<IconPower size={16} />} onClick={() => ask('force_stop')} data-testid="desktop-page-force-stop">
              {t('admin_desktops.desktops.force_stop')}
            </Button>
          )}
          {statusIn(GUEST_UP, d.status) && (
            <Button size="sm" variant="default" leftSection={<IconRefresh size={16} />} onClick={() => ask('reset')} data-testid="desktop-page-reset">
              {t('admin_desktops.desktops.reset')}
            </Button>
          )}
          {statusIn(VIEWABLE, d.status) && d.viewers.includes('browser-vnc') && (
            <Button size="sm" variant="default" leftSection={<IconHeadset size={16} />} onClick={() => setSupport(true)} data-testid="desktop-page-support">
              {t('admin_desktops.desktops.support')}
            </Button>
          )}
          {d.status === 'Stopped' && (
            <Button size="sm" variant="default" leftSection={<IconEdit size={16} />} component={Link} to={`/domain/edit?id=${encodeURIComponent(d.id)}`} state={{ back: `/isard-admin/desktops/${encodeURIComponent(d.id)}` }} data-testid="desktop-page-edit">
              {t('admin_desktops.page.edit')}
            </Button>
          )}
          {statusIn(AT_REST, d.status) && !d.deployment && (
            <Button size="sm" variant="default" leftSection={<IconUserShare size={16} />} onClick={() => setMoving(true)} data-testid="desktop-page-move">
              {t('admin_desktops.page.move')}
            </Button>
          )}
          <Button size="sm" variant="light" color="red" leftSection={<IconTrash size={16} />} onClick={() => ask('delete')} data-testid="desktop-page-delete">
            {t('admin_desktops.desktops.delete')}
          </Button>
        </Group>
      </Group>

      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
        <Screen d={d} />
        <Running d={d} />
        <Facts d={d} />
        <Hardware d={d} />
      </SimpleGrid>
      <Bookings d={d} />
      <History
        items={history.data?.pages.flatMap((p) => p.items)}
        summary={history.data?.pages[0]?.summary}
        failed={history.isError && !history.data}
        older={history.hasNextPage ? () => void history.fetchNextPage() : null}
        loadingOlder={history.isFetchingNextPage}
      />

      <ConfirmModal
        opened={confirm !== null}
        onClose={() => setConfirm(null)}
        title={confirm ? t(`admin_desktops.desktops.confirm_${confirm}_title`, { count: 1 }) : ''}
        confirmLabel={confirm ? t(`admin_desktops.desktops.${confirm}`) : ''}
        color={confirm === 'delete' ? 'red' : 'orange'}
        testId="desktop-page-confirm"
        onConfirm={async () => {
          if (confirm) await run(confirm);
        }}
      >
        <Text size="sm">{confirm ? t(`admin_desktops.desktops.confirm_${confirm}_body`) : ''}</Text>
        <Text size="sm" fw={600}>
          {name} ({d.username})
        </Text>
      </ConfirmModal>
      <ChangeOwnerModal row={moving ? d : null} onClose={() => setMoving(false)} save={(owner) => updateDesktop(d.id, { owner_id: owner })} testId="desktop-page-owner-change" anyone body={t('admin_desktops.page.move_body')} />
      <ConfirmModal
        opened={support}
        onClose={() => setSupport(false)}
        title={t('admin_desktops.desktops.support_title', { name })}
        confirmLabel={t('admin_desktops.desktops.support_open')}
        color="indigo"
        testId="desktop-page-support-confirm"
        onConfirm={async () => {
          await openViewer('browser-vnc', () => supportViewer(d.id, 'browser-vnc'));
          setSupport(false);
        }}
      >
        <Text size="sm">{t('admin_desktops.desktops.support_body', { owner: d.user_name })}</Text>
      </ConfirmModal>
    </Stack>
  );
}

/** A refusal (its reason), as a notice that stays a little longer. */
function notifyRefusal(message: string) {
  notifications.show({ message, color: 'orange', autoClose: 8000, 'data-testid': 'desktop-page-refusal' } as Parameters<typeof notifications.show>[0]);
}

function Section({ title, icon, children, testId }: { title: string; icon?: ReactNode; children: ReactNode; testId: string }) {
  return (
    <Paper withBorder radius="lg" p="md" data-testid={testId}>
      <Group gap="xs" mb="sm">
        {icon}
        <Title order={2} size="h4">
          {title}
        </Title>
      </Group>
      {children}
    </Paper>
  );
}

/** Label and value rows: a two-column table that stays readable at phone width. */
function Facts2({ rows }: { rows: [string, ReactNode, string?][] }) {
  return (
    <Table verticalSpacing={6} horizontalSpacing="xs" layout="fixed">
      <Table.Tbody>
        {rows.map(([label, value, testId]) => (
          <Table.Tr key={label}>
            <Table.Th w="40%" fw={500} c="dimmed" fz="sm" style={{ verticalAlign: 'top' }}>
              {label}
            </Table.Th>
            <Table.Td fz="sm" style={{ overflowWrap: 'anywhere' }} data-testid={testId}>
              {value}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The desktop's screen, refreshed every few seconds while it runs. */
function Screen({ d }: { d: TAdminDesktopDetail }) {
  const { t } = useTranslation();
  const viewable = statusIn(VIEWABLE, d.status);
  const url = useScreenshotUrl(['admin', 'desktop-screen', d.id], `/admin/desktops/${encodeURIComponent(d.id)}/screenshot`, viewable, THUMBNAIL_REFRESH_MS);
  return (
    <Section title={t('admin_desktops.page.screen')} icon={<IconEye size={18} />} testId="desktop-page-screen">
      <Box style={{ aspectRatio: '4 / 3', borderRadius: 'var(--mantine-radius-md)', overflow: 'hidden', background: 'var(--mantine-color-default-hover)' }}>
        {url ? (
          <img src={url} alt={t('admin_desktops.page.screen_alt', { name: builtInText(t, d.name) })} style={{ width: '100%', height: '100%', objectFit: 'contain', display: 'block' }} data-testid="desktop-page-thumbnail" />
        ) : (
          <Center h="100%">
            <Stack align="center" gap="xs">
              <ThemeIcon size={52} radius="xl" variant="default">
                <IconDeviceDesktop size={28} stroke={1.6} />
              </ThemeIcon>
              <Text size="sm" c="dimmed">
                {t(viewable ? 'admin_desktops.page.screen_waiting' : 'admin_desktops.page.screen_off')}
              </Text>
            </Stack>
          </Center>
        )}
      </Box>
    </Section>
  );
}

function Running({ d }: { d: TAdminDesktopDetail }) {
  const { t, i18n } = useTranslation();
  const now = useNow();
  const codeText = useCodeText();
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  const dash = <Text span c="dimmed" fz="sm">—</Text>;
  return (
    <Section title={t('admin_desktops.page.where')} icon={<IconPlayerPlay size={18} />} testId="desktop-page-running">
      <Facts2
        rows={[
          [t('admin_desktops.common.status'), <StateBadge key="s" status={d.status} size="sm" forceStopAt={d.force_stop_at} />],
          ...(d.status === 'Failed' && d.current_action ? [[t('admin_desktops.page.reason'), <Text key="r" fz="sm" c="var(--mantine-color-error)">{reasonText(t, i18n.exists, codeText, d.current_action)}</Text>] as [string, ReactNode]] : []),
          [t('admin_desktops.desktops.hypervisor'), d.hypervisor ? builtInText(t, d.hypervisor) : dash, 'desktop-page-hypervisor'],
          [t('admin_desktops.page.since'), d.started ? <Stack key="u" gap={0}><Text fz="sm">{dateFmt.format(new Date(d.started))}</Text><Uptime started={d.started} now={now} /></Stack> : dash, 'desktop-page-since'],
          [t('admin_desktops.page.address'), d.guest_ip ? <Text key="ip" ff="monospace" fz="sm">{d.guest_ip}</Text> : dash],
          [t('admin_desktops.page.viewers'), d.viewers.length ? <Group key="v" gap={4}>{d.viewers.map((v) => <Badge key={v} variant="light" size="sm" radius="sm">{t(`desktops.viewers.${v}`)}</Badge>)}</Group> : dash, 'desktop-page-viewers'],
          [t('admin_desktops.desktops.last_access'), d.accessed ? dateFmt.format(new Date(d.accessed)) : t('admin_desktops.desktops.never')],
          ...(d.scheduled_shutdown ? [[t('admin_desktops.page.scheduled_shutdown'), dateFmt.format(new Date(d.scheduled_shutdown))] as [string, ReactNode]] : []),
        ]}
      />
    </Section>
  );
}

function Facts({ d }: { d: TAdminDesktopDetail }) {
  const { t, i18n } = useTranslation();
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  const dash = <Text span c="dimmed" fz="sm">—</Text>;
  return (
    <Section title={t('admin_desktops.page.facts')} icon={<IconDeviceDesktop size={18} />} testId="desktop-page-facts">
      <Facts2
        rows={[
          [t('admin_desktops.common.owner'), `${d.user_name} · ${d.username}`, 'desktop-page-owner'],
          [t('admin_desktops.common.category'), builtInText(t, d.category_name), 'desktop-page-category'],
          [t('admin_desktops.common.group'), builtInText(t, d.group_name), 'desktop-page-group'],
          [t('admin_desktops.desktops.template'), d.template_name ? builtInText(t, d.template_name) : dash, 'desktop-page-template'],
          [t('admin_desktops.desktops.deployment'), d.deployment_name ? `${d.deployment_name}${d.deployment_owner ? ` · ${d.deployment_owner}` : ''}` : dash, 'desktop-page-deployment'],
          [t('admin_desktops.desktops.type'), t(d.persistent ? 'admin_desktops.desktops.persistent' : 'admin_desktops.desktops.temporary')],
          [t('admin_desktops.page.created'), dateFmt.format(new Date(d.created))],
        ]}
      />
    </Section>
  );
}

function Hardware({ d }: { d: TAdminDesktopDetail }) {
  const { t, i18n } = useTranslation();
  const h = d.hardware;
  const dash = <Text span c="dimmed" fz="sm">—</Text>;
  return (
    <Section title={t('admin_desktops.page.hardware')} icon={<IconSparkles size={18} />} testId="desktop-page-hardware">
      <Facts2
        rows={[
          [t('admin_desktops.desktops.vcpus'), String(d.vcpus), 'desktop-page-vcpus'],
          [t('admin_desktops.desktops.memory'), formatBytes(d.memory_mb * 1024 * 1024, i18n.language), 'desktop-page-memory'],
          [t('admin_desktops.page.boot_order'), h.boot_order.join(' → ') || dash],
          [t('admin_desktops.page.disk_bus'), h.disk_bus],
          [t('admin_desktops.page.video'), h.videos.join(', ') || dash],
          [t('admin_desktops.page.networks'), h.interfaces.join(', ') || dash],
          [t('admin_desktops.page.media'), t('admin_desktops.page.media_count', { isos: h.isos, floppies: h.floppies })],
          ...(h.vgpus.length ? [[t('admin_desktops.page.gpu'), h.vgpus.join(', ')] as [string, ReactNode]] : []),
        ]}
      />
      <Text fw={600} fz="sm" mt="md" mb={4}>
        {t('admin_desktops.page.disks')}
      </Text>
      {d.disks.length === 0 ? (
        <Text fz="sm" c="dimmed">
          {t('admin_desktops.page.no_disks')}
        </Text>
      ) : (
        <Stack gap={6} data-testid="desktop-page-disks">
          {d.disks.map((disk, i) => (
            <Group key={disk.id} justify="space-between" gap="xs" wrap="wrap" data-testid="desktop-page-disk">
              <Text fz="sm">
                {t('admin_desktops.page.disk_n', { n: i + 1 })} · {disk.format}
                {disk.hypervisor ? ` · ${builtInText(t, disk.hypervisor)}` : ''}
              </Text>
              <Text fz="sm" c="dimmed">
                {t('admin_desktops.page.disk_size', { size: formatBytes(disk.size, i18n.language), used: formatBytes(disk.used, i18n.language) })}
              </Text>
            </Group>
          ))}
        </Stack>
      )}
    </Section>
  );
}

function Bookings({ d }: { d: TAdminDesktopDetail }) {
  const { t, i18n } = useTranslation();
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  return (
    <Section title={t('admin_desktops.page.bookings')} testId="desktop-page-bookings">
      {d.bookings.length === 0 ? (
        <Text fz="sm" c="dimmed">
          {t('admin_desktops.page.no_bookings')}
        </Text>
      ) : (
        <Stack gap={6}>
          {d.bookings.map((b) => (
            <Group key={b.id} justify="space-between" wrap="wrap" gap="xs">
              <Text fz="sm" fw={500}>
                {b.title || t('admin_desktops.page.booking')}
              </Text>
              <Text fz="sm" c="dimmed">
                {dateFmt.formatRange(new Date(b.start), new Date(b.end))}
              </Text>
            </Group>
          ))}
        </Stack>
      )}
    </Section>
  );
}

type T = ReturnType<typeof useTranslation>['t'];
/** A failure's or a stop's reason: the page's own words for the system's reasons, else the error catalogue's. */
function reasonText(t: T, exists: (key: string) => boolean, codeText: (code: string) => string, reason: string) {
  if (exists(`admin_desktops.page.reasons.${reason}`)) return t(`admin_desktops.page.reasons.${reason}`);
  if (reason === 'start-failed') return t('errors.desktop_start_failed');
  return codeText(reason);
}

function History({ items, summary, failed, older, loadingOlder }: {
  items?: TDesktopHistoryItem[];
  summary?: { starts: number; failures: number; seconds: number; viewers: Record<string, number> };
  failed: boolean;
  /** Loads the next older page (null: the history is all shown). */
  older: (() => void) | null;
  loadingOlder: boolean;
}) {
  const { t, i18n } = useTranslation();
  const codeText = useCodeText();
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'medium' }), [i18n.language]);
  const line = (x: TDesktopHistoryItem) => {
    const parts: string[] = [];
    if (x.kind === 'audit') parts.push(t(`admin_system.audit.actions.${(x.action ?? '').replaceAll('.', '_')}`, { defaultValue: x.action ?? '' }));
    else parts.push(t(`admin_desktops.page.events.${x.kind}`));
    if (x.kind === 'viewer' && x.protocol) parts.push(t(`desktops.viewers.${x.protocol}`, { defaultValue: x.protocol }));
    return parts.join(' · ');
  };
  const more = (x: TDesktopHistoryItem) => {
    const parts: string[] = [];
    if (x.actor) parts.push(t('admin_desktops.page.by', { who: x.actor }));
    else if (x.kind !== 'created' && x.kind !== 'viewer' && x.kind !== 'started' && x.kind !== 'stopped') parts.push(t('admin_desktops.page.by_system'));
    if (x.hypervisor) parts.push(t('admin_desktops.page.on_host', { host: builtInText(t, x.hypervisor) }));
    if (x.seconds !== null) parts.push(t('admin_desktops.page.ran', { time: formatDuration(x.seconds) }));
    if (x.reason) parts.push(reasonText(t, i18n.exists, codeText, x.reason));
    return parts.join(' · ');
  };
  const icon = (x: TDesktopHistoryItem) =>
    x.kind === 'start_failed' ? <IconAlertTriangle size={12} /> : x.kind === 'viewer' ? <IconEye size={12} /> : x.kind === 'started' || x.kind === 'start' ? <IconPlayerPlay size={12} /> : x.kind === 'created' ? <IconSparkles size={12} /> : x.kind === 'audit' ? <IconHistory size={12} /> : <IconPlayerStop size={12} />;
  return (
    <Section title={t('admin_desktops.page.history')} icon={<IconHistory size={18} />} testId="desktop-page-history">
      {summary && (
        <Group gap="xs" mb="md" wrap="wrap" data-testid="desktop-page-summary">
          <Badge variant="light" radius="sm">{t('admin_desktops.page.summary_starts', { n: summary.starts })}</Badge>
          <Badge variant="light" radius="sm" color={summary.failures ? 'red' : 'gray'}>{t('admin_desktops.page.summary_failures', { n: summary.failures })}</Badge>
          <Badge variant="light" radius="sm" color="teal">{t('admin_desktops.page.summary_ran', { time: formatDuration(summary.seconds) })}</Badge>
          {Object.entries(summary.viewers).map(([p, n]) => (
            <Badge key={p} variant="light" radius="sm" color="grape">
              {t(`desktops.viewers.${p}`, { defaultValue: p })}: {n}
            </Badge>
          ))}
        </Group>
      )}
      {failed ? (
        <Text fz="sm" c="dimmed">{t('admin_desktops.common.load_failed')}</Text>
      ) : !items ? (
        <Skeleton h={80} radius="md" />
      ) : (
        <Timeline bulletSize={22} lineWidth={2} data-testid="desktop-page-timeline">
          {items.map((x, i) => (
            <Timeline.Item
              key={`${x.at}-${x.kind}-${i}`}
              bullet={icon(x)}
              color={x.kind === 'start_failed' ? 'red' : x.kind === 'viewer' ? 'grape' : x.kind === 'started' ? 'teal' : 'indigo'}
              title={<Text fz="sm" fw={600}>{line(x)}</Text>}
              data-testid="desktop-history-item"
              data-kind={x.kind}
            >
              {more(x) && <Text fz="sm" c={x.kind === 'start_failed' ? 'var(--mantine-color-error)' : 'dimmed'}>{more(x)}</Text>}
              <Text fz="xs" c="dimmed">{dateFmt.format(new Date(x.at))}</Text>
            </Timeline.Item>
          ))}
        </Timeline>
      )}
      {items && older && (
        <Group justify="center" mt="md">
          <Button variant="default" size="sm" leftSection={<IconHistory size={16} />} loading={loadingOlder} onClick={older} data-testid="desktop-history-older">
            {t('admin_desktops.page.older')}
          </Button>
        </Group>
      )}
    </Section>
  );
}
