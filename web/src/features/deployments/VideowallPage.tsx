import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ActionIcon, Badge, Button, Group, Loader, Modal, SegmentedControl, Skeleton, Stack, Text, Tooltip } from '@mantine/core';
import { useInViewport } from '@mantine/hooks';
import { useMutation, useQuery } from '@tanstack/react-query';
import { IconArrowsMaximize, IconEye, IconHandClick, IconLayoutGrid, IconPlayerPlay, IconPlugConnectedX, IconRefresh } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { videowallAvailable, type TBrowserViewerTicket, type TDeploymentDesktop } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { fetchVncTicket } from '../../entities/viewer/open';
import { useVnc } from '../../entities/viewer/use-vnc';
import { deploymentQuery, startAll } from './api';
import { DeploymentNotFound } from './NotFound';
import { useDeploymentsLive } from './live';
import { isStarted } from './logic';
import classes from './Videowall.module.css';
import '../../i18n/areas/deployments';
import { builtInText } from '../../lib/built-in-text';

const SIZES = { s: '220px', m: '300px', l: '440px' } as const;
type Size = keyof typeof SIZES;
const SIZE_KEY = 'vdi.videowall.size';

/**
 * One desktop's live screen: a fresh one-time ticket and a noVNC connection while `active`
 * (in view, or enlarged), none otherwise.
 */
function useLiveScreen(desktopId: string, active: boolean, viewOnly: boolean) {
  const { t, i18n } = useTranslation();
  const screen = useRef<HTMLDivElement>(null);
  const [ticket, setTicket] = useState<TBrowserViewerTicket | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!active) return setTicket(null);
    let cancelled = false;
    setError(null);
    fetchVncTicket(desktopId).then(
      (tk) => !cancelled && setTicket(tk),
      (err) => !cancelled && setError(errorMessage(t, err, (k) => i18n.exists(k))),
    );
    return () => {
      cancelled = true;
    };
  }, [desktopId, active, attempt, t, i18n]);
  const vnc = useVnc(screen, ticket, { viewOnly, focus: !viewOnly });
  const retry = useCallback(() => {
    setTicket(null);
    setAttempt((n) => n + 1);
  }, []);
  return { screen, vnc, error, retry, waiting: active && !ticket && !error };
}

function ScreenOverlay({ s, name }: { s: ReturnType<typeof useLiveScreen>; name: string }) {
  const { t } = useTranslation();
  if (s.error || s.vnc.status === 'disconnected')
    return (
      <div className={classes.overlay} data-testid="videowall-tile-error">
        <IconPlugConnectedX size={26} />
        <Text size="xs" ta="center" px="sm">
          {s.error ?? t(`viewer.ended.${s.vnc.ended ?? 'closed'}`)}
        </Text>
        <Button
          size="compact-xs"
          variant="white"
          color="dark"
          leftSection={<IconRefresh size={12} />}
          onClick={(e) => {
            e.stopPropagation();
            s.retry();
          }}
        >
          {t('viewer.reconnect')}
        </Button>
      </div>
    );
  if (s.waiting || s.vnc.status === 'connecting')
    return (
      <div className={classes.overlay}>
        <Loader size="sm" color="gray" />
        <Text size="xs">{t('viewer.connecting_to', { name })}</Text>
      </div>
    );
  return null;
}

function Tile({ d, onEnlarge }: { d: TDeploymentDesktop; onEnlarge: (d: TDeploymentDesktop) => void }) {
  const { t } = useTranslation();
  const { ref, inViewport } = useInViewport();
  const s = useLiveScreen(d.id, inViewport, true);
  const who = d.user_name ?? d.user;
  return (
    <div className={classes.tile} data-testid="videowall-tile" data-desktop-id={d.id} data-status={s.vnc.status} data-user={who}>
      {/* A click anywhere on the screen enlarges it; keyboards and screen readers use the corner
          button (one control per purpose: no button inside a button). */}
      <div ref={ref} className={classes.screen} onClick={() => onEnlarge(d)}>
        <div ref={s.screen} className={classes.display} data-testid="videowall-screen" />
        <ScreenOverlay s={s} name={who} />
        <Tooltip label={t('deployments.videowall.enlarge')} withArrow>
          <ActionIcon
            className={classes.corner}
            variant="filled"
            color="dark"
            size="md"
            aria-label={t('deployments.videowall.enlarge_of', { name: who })}
            onClick={(e) => {
              e.stopPropagation();
              onEnlarge(d);
            }}
            data-testid="videowall-enlarge"
          >
            <IconArrowsMaximize size={16} />
          </ActionIcon>
        </Tooltip>
      </div>
      <Group justify="space-between" gap={6} wrap="nowrap">
        <div style={{ minWidth: 0 }}>
          <Text size="sm" fw={600} lineClamp={1} title={who} data-testid="videowall-name">
            {who}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={1}>
            {builtInText(t, d.name)}
          </Text>
        </div>
        {s.vnc.status === 'connected' && (
          <Badge size="xs" variant="dot" color="teal" style={{ flex: '0 0 auto' }}>
            {t('deployments.videowall.live')}
          </Badge>
        )}
      </Group>
    </div>
  );
}

/** One screen, large, view-only until the teacher takes control. */
function Enlarged({ d, onClose }: { d: TDeploymentDesktop | null; onClose: () => void }) {
  const { t } = useTranslation();
  const [control, setControl] = useState(false);
  useEffect(() => setControl(false), [d?.id]);
  return (
    <Modal
      opened={d !== null}
      onClose={onClose}
      size="90%"
      centered
      radius="lg"
      title={
        d && (
          <Group gap="sm" wrap="nowrap">
            <Text fw={650}>{d.user_name ?? d.user}</Text>
            <Text size="sm" c="dimmed" lineClamp={1}>
              {builtInText(t, d.name)}
            </Text>
          </Group>
        )
      }
      data-testid="videowall-enlarged"
    >
      {d && <EnlargedScreen d={d} control={control} onControl={setControl} />}
    </Modal>
  );
}

function EnlargedScreen({ d, control, onControl }: { d: TDeploymentDesktop; control: boolean; onControl: (c: boolean) => void }) {
  const { t } = useTranslation();
  const s = useLiveScreen(d.id, true, !control);
  return (
    <Stack gap="sm">
      <Group justify="space-between" gap="sm">
        <Text size="xs" c="dimmed">
          {t(control ? 'deployments.videowall.control_hint' : 'deployments.videowall.view_only_hint')}
        </Text>
        <Group gap="xs">
          <Button size="xs" variant={control ? 'filled' : 'light'} color={control ? 'orange' : undefined} leftSection={control ? <IconEye size={14} /> : <IconHandClick size={14} />} onClick={() => onControl(!control)} disabled={s.vnc.status !== 'connected'} data-testid="videowall-control">
            {t(control ? 'deployments.videowall.release' : 'deployments.videowall.take_control')}
          </Button>
          {control && (
            <Button size="xs" variant="default" onClick={() => s.vnc.rfb.current?.sendCtrlAltDel()}>
              {t('viewer.ctrl_alt_del')}
            </Button>
          )}
        </Group>
      </Group>
      <div className={classes.big} data-testid="videowall-enlarged-screen" data-status={s.vnc.status}>
        <div ref={s.screen} className={classes.display} />
        <ScreenOverlay s={s} name={d.user_name ?? d.user} />
      </div>
    </Stack>
  );
}

/** /deployment/{id}/videowall: every running desktop's screen, live; tiles connect only while in view. */
export default function VideowallPage() {
  const { t } = useTranslation();
  const { id = '' } = useParams();
  // A refusal (4xx) the page shows itself; other failures go to the central handler.
  const q = useQuery({ ...deploymentQuery(id), retry: (n, err) => !(err instanceof HttpError && err.status < 500) && n < 2, meta: { handlesError: (err) => err instanceof HttpError && err.status < 500 } });
  useDeploymentsLive(id);
  const [size, setSize] = useState<Size>(() => (localStorage.getItem(SIZE_KEY) as Size | null) ?? 'm');
  const [enlarged, setEnlarged] = useState<string | null>(null);
  const start = useMutation({ mutationFn: () => startAll(id), onSuccess: () => notifySuccess(t('deployments.detail.starting_all')), onError: (err) => handleError(err) });
  const d = q.data;
  const running = (d?.desktops ?? []).filter(isStarted).sort((a, b) => (a.user_name ?? a.user).localeCompare(b.user_name ?? b.user, undefined, { sensitivity: 'base' }));
  const big = running.find((x) => x.id === enlarged) ?? null;
  // A desktop that stops closes its enlarged screen.
  useEffect(() => {
    if (enlarged && d && !big) setEnlarged(null);
  }, [enlarged, d, big]);
  const back = `/deployment/${encodeURIComponent(id)}`;

  if (q.isError)
    return (
      <DeploymentNotFound />
    );
  const viewers = d?.desktops[0]?.viewers.map((v) => v.replace('-', '_')) ?? [];
  return (
    <>
      <PageHeader
        title={d ? t('deployments.videowall.heading', { name: d.name }) : t('routes.deployment_videowall')}
        subtitle={d ? t('deployments.videowall.subheading', { started: running.length, total: d.totalDesktops }) : undefined}
        actions={
          <>
            <SegmentedControl
              size="xs"
              value={size}
              onChange={(v) => {
                setSize(v as Size);
                localStorage.setItem(SIZE_KEY, v);
              }}
              data={(Object.keys(SIZES) as Size[]).map((k) => ({ value: k, label: t(`deployments.videowall.size_${k}`) }))}
              aria-label={t('deployments.videowall.size')}
            />
            <Button variant="subtle" component={Link} to={back} data-testid="videowall-back">
              {t('deployments.videowall.back')}
            </Button>
          </>
        }
      />
      {!d ? (
        <div className={classes.grid}>
          {[0, 1, 2].map((i) => (
            <Skeleton key={i} style={{ aspectRatio: '16 / 9' }} radius="md" />
          ))}
        </div>
      ) : running.length === 0 ? (
        <EmptyState
          icon={<IconLayoutGrid size={30} />}
          title={t('deployments.videowall.empty_title')}
          body={t(d.totalDesktops ? 'deployments.videowall.empty_body' : 'deployments.detail.no_desktops')}
          action={
            d.totalDesktops > 0 ? (
              <Button leftSection={<IconPlayerPlay size={16} />} color="teal" loading={start.isPending} onClick={() => start.mutate()} data-testid="videowall-start-all">
                {t('deployments.detail.start_all')}
              </Button>
            ) : undefined
          }
        />
      ) : (
        <>
          {viewers.length > 0 && !videowallAvailable(viewers) && (
            <Text size="sm" c="orange" mb="md">
              {t('deployments.form.videowall_rdp')}
            </Text>
          )}
          <div className={classes.grid} style={{ ['--tile-min' as string]: SIZES[size] }} data-testid="videowall-grid">
            {running.map((x) => (
              <Tile key={x.id} d={x} onEnlarge={(one) => setEnlarged(one.id)} />
            ))}
          </div>
        </>
      )}
      <Enlarged d={big} onClose={() => setEnlarged(null)} />
    </>
  );
}
