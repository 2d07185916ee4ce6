import { useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { Button, Loader, Modal, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { GUEST_UP, REACHABLE, STARTABLE, statusIn, ZPoolTakeAnswer, ZSignInDesktop, type TDesktop, type TSignInDesktop, type TViewerAnswer } from '@vdi/contracts';
import { api } from '../../lib/api';
import { handleError } from '../../lib/error-handler';
import { DESKTOPS_KEY, desktopCall, fetchViewer } from '../../entities/desktop/api';
import { browserViewerUrl } from '../../entities/viewer/open';
import { isSignedInArrival, VIEWER_HOME_PARAM } from '../../lib/sign-in-steps';
import { onEvent } from '../../lib/socket';
import '../../i18n/areas/content';

type Opens = NonNullable<TSignInDesktop['opens']>;

/**
 * The guest shows what this viewer needs: a screen (VNC), or also its address (RDP). The browser's screen may be asked
 * from the start on: the server holds the viewer's connection until the machine runs.
 */
const ready = (d: TDesktop | undefined, viewer: Opens['viewer']) =>
  !!d && (viewer === 'browser-vnc' ? d.state === 'Starting' || statusIn(GUEST_UP, d.state) : statusIn(REACHABLE, d.state));

/** The browser viewer in this tab, its way back to the desktops screen kept. */
function openHere(answer: TViewerAnswer & { kind: 'browser' }) {
  const url = new URL(browserViewerUrl(answer), window.location.href);
  url.searchParams.set(VIEWER_HOME_PARAM, '1');
  window.location.assign(url.href);
}

/**
 * "My desktop at sign-in": right after a sign-in, the desktop the person (or their group) chose is started if it is
 * at rest and opened in the browser viewer in this tab; the desktops screen stays underneath for "show my desktops".
 * A desktop pool chosen: a desktop is taken from it (a prepared one at once, or the person's place in its queue
 * until one is given), then opened the same way.
 */
export function SignInOpener({ desktops }: { desktops: TDesktop[] | undefined }) {
  const { t } = useTranslation();
  const location = useLocation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [opens, setOpens] = useState<Opens | null>(null);
  /** The desktop to open: the chosen one, or the one the pool gave. */
  const [desktopId, setDesktopId] = useState<string | null>(null);
  const [queued, setQueued] = useState<{ place: number; wait_seconds: number } | null>(null);
  const asked = useRef(false);
  const took = useRef(false);
  const started = useRef(false);
  const viewing = useRef(false);

  // Asked once, and the arrival forgotten (a reload of the screen opens nothing).
  useEffect(() => {
    if (asked.current || !isSignedInArrival(location.state)) return;
    asked.current = true;
    void navigate(location.pathname, { replace: true, state: null });
    api
      .get('/user/sign-in-desktop', ZSignInDesktop)
      .then((a) => {
        setOpens(a.opens);
        if (a.opens && !a.opens.pool_id) setDesktopId(a.opens.desktop_id);
      })
      .catch(() => undefined); // the desktops screen is the answer then
  }, [location.state, location.pathname, navigate]);

  // A pool: take a desktop from it once (the one the person holds, a prepared one, or a place in the queue).
  const poolId = opens?.pool_id ?? null;
  const poolViewer = opens?.pool_id ? opens.viewer : null;
  useEffect(() => {
    if (!poolId || !poolViewer || took.current) return;
    took.current = true;
    api
      .post(`/desktop-pools/${encodeURIComponent(poolId)}/take`, { viewer: poolViewer }, ZPoolTakeAnswer)
      .then((answer) => {
        if (answer.kind === 'queued') return setQueued({ place: answer.place, wait_seconds: answer.wait_seconds });
        // (the pool starts a desktop the person holds that was at rest)
        started.current = true;
        void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
        // Its ticket came with it: opened now; else once the desktop shows ready in the list.
        if (answer.viewer) {
          viewing.current = true;
          return openHere(answer.viewer);
        }
        setDesktopId(answer.desktop_id);
      })
      .catch((err: unknown) => {
        handleError(err);
        setOpens(null);
      });
  }, [poolId, poolViewer, qc]);
  useEffect(
    () =>
      poolId
        ? onEvent('desktop_pool_given', ({ pool_id, desktop_id }) => {
            if (pool_id !== poolId) return;
            setQueued(null);
            void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
            setDesktopId(desktop_id);
          })
        : undefined,
    [poolId, qc],
  );

  const desktop = desktopId ? desktops?.find((d) => d.id === desktopId) : undefined;

  useEffect(() => {
    if (!opens || !desktop || viewing.current) return;
    const stop = (err?: unknown) => {
      if (err) handleError(err);
      setOpens(null);
    };
    if (ready(desktop, opens.viewer)) {
      viewing.current = true;
      fetchViewer(desktop.id, opens.viewer)
        .then((answer) => (answer.kind === 'browser' ? openHere(answer) : stop()))
        .catch((err: unknown) => {
          viewing.current = false;
          stop(err);
        });
    } else if (statusIn(STARTABLE, desktop.state) && !started.current) {
      started.current = true;
      desktopCall('start', desktop.id)
        .then(() => qc.invalidateQueries({ queryKey: DESKTOPS_KEY }))
        .catch(stop);
    } else if (desktop.state === 'Failed') {
      stop();
    }
  }, [opens, desktop, qc]);

  return (
    <Modal opened={!!opens} onClose={() => setOpens(null)} title={t('desktops.sign_in_open.title')} centered withCloseButton={false} data-testid="sign-in-opening">
      <Stack align="center" gap="md" py="sm">
        <Loader />
        <Text ta="center">{t('desktops.sign_in_open.body', { name: opens?.name ?? '' })}</Text>
        {queued && (
          <Text ta="center" size="sm" c="orange.9" role="status" data-testid="sign-in-opening-place">
            {t('desktop_pools.place', { place: queued.place, seconds: queued.wait_seconds })}
          </Text>
        )}
        <Button variant="default" onClick={() => setOpens(null)} data-testid="sign-in-opening-list">
          {t('desktops.sign_in_open.show_list')}
        </Button>
      </Stack>
    </Modal>
  );
}
