import { useEffect, useState } from 'react';
import { useParams } from 'react-router';
import { Alert, Anchor, Button, Divider, Group, Loader, Paper, SimpleGrid, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { modals } from '../../lib/modals';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  IconAlertTriangle,
  IconBook,
  IconClockPause,
  IconDeviceDesktop,
  IconDownload,
  IconLinkOff,
  IconPlayerPlay,
  IconPlayerStop,
  IconPower,
  IconRotateClockwise,
  IconWorld,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { io } from 'socket.io-client';
import { desktopState, SOCKET_NAMESPACE, SOCKET_OPTIONS, SOCKET_PATH, ZDirectViewer, type TDirectViewer } from '@vdi/contracts';
import { HttpError, isGone } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { canOpen, formatLocal } from '../../entities/desktop/logic';
import { StateBadge } from '../../entities/desktop/StateBadge';
import { openViewer } from '../../entities/viewer/open';
import { codeFromPath, directAction, directDocsQuery, directViewer, fetchDirect, mergeDirectUpdate } from './api';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';

const CARD_WIDTH = 560;

function Shell({ children, testId }: { children: React.ReactNode; testId: string }) {
  return (
    <Paper withBorder shadow="md" radius="lg" p={{ base: 'lg', sm: 'xl' }} w="100%" maw={CARD_WIDTH} data-testid={testId}>
      {children}
    </Paper>
  );
}

function Refused() {
  const { t } = useTranslation();
  return (
    <Shell testId="direct-refused">
      <Stack align="center" gap="md" py="md">
        <ThemeIcon size={64} radius="xl" variant="light" color="red">
          <IconLinkOff size={34} />
        </ThemeIcon>
        <Title order={1} size="h3" ta="center">
          {t('direct.refused_title')}
        </Title>
        <Text c="dimmed" size="sm" ta="center" maw={420}>
          {t('direct.refused_body')}
        </Text>
      </Stack>
    </Shell>
  );
}

/** Keeps the page's copy of the desktop current through the socket the viewer token opens. */
function useDirectLive(code: string, data: TDirectViewer | undefined) {
  const qc = useQueryClient();
  const jwt = data?.jwt;
  useEffect(() => {
    if (!jwt) return;
    const socket = io(SOCKET_NAMESPACE, { path: SOCKET_PATH, transports: ['websocket'], ...SOCKET_OPTIONS, forceNew: true, auth: { jwt } });
    socket.on('directviewer_update', (raw: unknown) => {
      try {
        const parsed = ZDirectViewer.safeParse(typeof raw === 'string' ? JSON.parse(raw) : raw);
        if (!parsed.success) return;
        const prev = qc.getQueryData<TDirectViewer>(['direct', code]);
        const next = mergeDirectUpdate(prev, parsed.data);
        qc.setQueryData(['direct', code], next);
        // Ready now, but the viewers are not known yet: ask once (a running desktop is not started again).
        if (canOpen(desktopState(next.vmState)) && !Object.keys(next.viewers).length) void qc.invalidateQueries({ queryKey: ['direct', code], exact: true });
      } catch {
        /* a malformed event changes nothing */
      }
    });
    return () => void socket.disconnect();
  }, [jwt, code, qc]);
}

export default function DirectViewerPage() {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const code = codeFromPath(useParams()['*']);
  const key = ['direct', code];
  const query = useQuery({
    queryKey: key,
    queryFn: () => fetchDirect(code),
    enabled: Boolean(code),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
    // A public page: it shows a refusal or a failure itself.
    meta: HANDLES_ERROR,
  });
  const docs = useQuery({ ...directDocsQuery, retry: false });
  const data = query.data;
  useDirectLive(code, data);
  const [failure, setFailure] = useState<string | null>(null);
  const message = (err: unknown) => errorMessage(i18n.t.bind(i18n), err, (k) => i18n.exists(k));
  const refused = !code || isGone(query.error);

  useEffect(() => {
    if (data) document.title = `${builtInText(t, data.vmName)} · ${t('app.title')}`;
  }, [data, t]);

  /** The state an action leads to, unless a live update already told something newer. */
  const setStatus = (status: string, from: string) => qc.setQueryData<TDirectViewer>(key, (d) => (d && d.vmState === from ? { ...d, vmState: status } : d));

  const act = useMutation({
    mutationFn: (v: { action: 'start' | 'stop' | 'reset'; from: string }) => directAction(code, v.action),
    onMutate: () => setFailure(null),
    onSuccess: (_r, v) => {
      if (v.action === 'start') setStatus('Starting', v.from);
      if (v.action === 'stop') setStatus(desktopState(v.from) === 'shutting-down' ? 'Stopping' : 'Shutting-down', v.from);
    },
    onError: (err) => {
      if (err instanceof HttpError && err.status === 404) void query.refetch();
      setFailure(message(err));
    },
  });

  const open = useMutation({
    // A fresh answer each time: browser tickets are single-use and short-lived.
    mutationFn: (kind: 'browser-vnc' | 'file-spice') =>
      openViewer(kind, async () => {
        const fresh = await fetchDirect(code);
        qc.setQueryData(key, fresh);
        const v = directViewer(fresh, kind);
        if (!v) throw new Error('viewer not offered');
        return v;
      }),
    onMutate: () => setFailure(null),
    onError: (err) => {
      if (err instanceof HttpError && err.status === 404) void query.refetch();
      setFailure(message(err));
    },
  });

  if (refused) return <Refused />;

  if (query.isLoading)
    return (
      <Shell testId="direct-loading">
        <Stack align="center" gap="md" py="xl">
          <Loader />
          <Title order={1} size="h4" ta="center">
            {t('direct.preparing_title')}
          </Title>
          <Text size="sm" c="dimmed" ta="center" maw={400}>
            {t('direct.preparing_body')}
          </Text>
        </Stack>
      </Shell>
    );

  if (query.isError || !data)
    return (
      <Shell testId="direct-error">
        <Stack align="center" gap="md" py="md">
          <ThemeIcon size={64} radius="xl" variant="light" color="orange">
            <IconAlertTriangle size={34} />
          </ThemeIcon>
          <Title order={1} size="h3" ta="center">
            {t('direct.error_title')}
          </Title>
          <Text size="sm" c="dimmed" ta="center" data-testid="direct-error-text">
            {message(query.error)}
          </Text>
          <Button variant="default" onClick={() => void query.refetch()} loading={query.isFetching} data-testid="direct-retry">
            {t('common.retry')}
          </Button>
        </Stack>
      </Shell>
    );

  const state = desktopState(data.vmState);
  const ready = canOpen(state);
  const browser = directViewer(data, 'browser-vnc');
  const spice = directViewer(data, 'file-spice');
  const shutdown = formatLocal(data.scheduled.shutdown);
  const booking = formatLocal(data.next_booking_start);
  const docsUrl = docs.data?.viewers_documentation_url;

  return (
    <Shell testId="direct-page">
      <Stack gap="lg">
        <Group gap="md" wrap="nowrap" align="flex-start">
          <ThemeIcon size={52} radius="md" variant="light" color={ready ? 'teal' : 'indigo'}>
            <IconDeviceDesktop size={30} />
          </ThemeIcon>
          <Stack gap={4} style={{ minWidth: 0, flex: 1 }}>
            <Group gap="sm" wrap="wrap">
              <Title order={1} size="h3" data-testid="direct-name" style={{ wordBreak: 'break-word' }}>
                {builtInText(t, data.vmName)}
              </Title>
              <StateBadge status={data.vmState} forceStopAt={data.force_stop_at} />
            </Group>
            {data.vmDescription && (
              <Text size="sm" c="dimmed">
                {data.vmDescription}
              </Text>
            )}
            <Text size="xs" c="dimmed">
              {t('direct.shared_hint')}
            </Text>
          </Stack>
        </Group>

        {shutdown && (
          <Alert variant="light" color="orange" icon={<IconClockPause size={18} />} p="sm" data-testid="direct-shutdown">
            <Text size="sm">{t('desktops.auto_shutdown', { date: shutdown })}</Text>
          </Alert>
        )}
        {booking && (
          <Text size="sm" c="dimmed">
            {t('desktops.next_booking', { start: booking })}
          </Text>
        )}

        <Stack gap="xs">
          <Text fw={600} size="sm">
            {t('direct.open_heading')}
          </Text>
          <SimpleGrid cols={1} spacing="sm">
            <Button
              size="md"
              leftSection={<IconWorld size={18} />}
              disabled={!ready || !browser}
              loading={open.isPending && open.variables === 'browser-vnc'}
              onClick={() => open.mutate('browser-vnc')}
              data-testid="direct-open-browser"
            >
              {t('direct.open_browser')}
            </Button>
            <Button
              size="md"
              variant="default"
              leftSection={<IconDownload size={18} />}
              disabled={!ready || !spice}
              loading={open.isPending && open.variables === 'file-spice'}
              onClick={() => open.mutate('file-spice')}
              data-testid="direct-download-spice"
            >
              {t('direct.download_spice')}
            </Button>
          </SimpleGrid>
          {!ready && (
            <Text size="xs" c="dimmed" data-testid="direct-not-ready">
              {t(state === 'stopped' || state === 'failed' ? 'direct.start_first' : state === 'shutting-down' || state === 'stopping' ? 'direct.stopping' : 'direct.wait')}
            </Text>
          )}
          {docsUrl && (
            <Anchor href={docsUrl} target="_blank" rel="noopener noreferrer" size="xs">
              <Group gap={4} component="span" wrap="nowrap">
                <IconBook size={14} />
                {t('direct.viewer_help')}
              </Group>
            </Anchor>
          )}
        </Stack>

        {failure && (
          <Alert variant="light" color="red" icon={<IconAlertTriangle size={18} />} p="sm" data-testid="direct-failure" withCloseButton onClose={() => setFailure(null)}>
            <Text size="sm">{failure}</Text>
          </Alert>
        )}

        <Divider />
        <Group justify="space-between" wrap="wrap" gap="sm">
          <Text size="sm" c="dimmed">
            {t('direct.power_heading')}
          </Text>
          <Group gap="xs">
            {state === 'stopped' ? (
              <Button color="teal" leftSection={<IconPlayerPlay size={16} />} loading={act.isPending && act.variables?.action === 'start'} onClick={() => act.mutate({ action: 'start', from: data.vmState })} data-testid="direct-start">
                {t('desktops.actions.start')}
              </Button>
            ) : state === 'shutting-down' ? (
              <Button color="red" leftSection={<IconPower size={16} />} loading={act.isPending && act.variables?.action === 'stop'} onClick={() => act.mutate({ action: 'stop', from: data.vmState })} data-testid="direct-force-stop">
                {t('desktops.actions.forceStop')}
              </Button>
            ) : (
              <Button
                color="red"
                variant="light"
                leftSection={<IconPlayerStop size={16} />}
                disabled={!(ready || state === 'paused')}
                loading={act.isPending && act.variables?.action === 'stop'}
                onClick={() => act.mutate({ action: 'stop', from: data.vmState })}
                data-testid="direct-stop"
              >
                {t('desktops.actions.stop')}
              </Button>
            )}
            <Button
              variant="default"
              leftSection={<IconRotateClockwise size={16} />}
              disabled={!ready}
              loading={act.isPending && act.variables?.action === 'reset'}
              onClick={() =>
                modals.openConfirmModal({
                  title: t('desktops.confirm.reset_title'),
                  centered: true,
                  children: <Text size="sm">{t('desktops.confirm.reset_body', { name: builtInText(t, data.vmName) })}</Text>,
                  labels: { confirm: t('desktops.actions.reset'), cancel: t('common.cancel') },
                  confirmProps: { color: 'red', 'data-testid': 'confirm-reset' },
                  onConfirm: () => act.mutate({ action: 'reset', from: data.vmState }),
                })
              }
              data-testid="direct-reset"
            >
              {t('desktops.actions.reset')}
            </Button>
          </Group>
        </Group>
      </Stack>
    </Shell>
  );
}
