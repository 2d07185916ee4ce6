import { useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { Button, Loader, Modal, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { GUEST_UP, REACHABLE, STARTABLE, statusIn, ZSignInDesktop, type TDesktop, type TSignInDesktop } from '@vdi/contracts';
import { api } from '../../lib/api';
import { handleError } from '../../lib/error-handler';
import { DESKTOPS_KEY, desktopCall, fetchViewer } from '../../entities/desktop/api';
import { browserViewerUrl } from '../../entities/viewer/open';
import { isSignedInArrival, VIEWER_HOME_PARAM } from '../../lib/sign-in-steps';

type Opens = NonNullable<TSignInDesktop['opens']>;

/** The guest shows what this viewer needs: a screen (VNC), or also its address (RDP). */
const ready = (d: TDesktop | undefined, viewer: Opens['viewer']) => !!d && statusIn(viewer === 'browser-vnc' ? GUEST_UP : REACHABLE, d.state);

/**
 * "My desktop at sign-in": right after a sign-in, the desktop the person (or their group) chose is started if it is
 * at rest and opened in the browser viewer in this tab; the desktops screen stays underneath for "show my desktops".
 */
export function SignInOpener({ desktops }: { desktops: TDesktop[] | undefined }) {
  const { t } = useTranslation();
  const location = useLocation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [opens, setOpens] = useState<Opens | null>(null);
  const asked = useRef(false);
  const started = useRef(false);
  const viewing = useRef(false);

  // Asked once, and the arrival forgotten (a reload of the screen opens nothing).
  useEffect(() => {
    if (asked.current || !isSignedInArrival(location.state)) return;
    asked.current = true;
    void navigate(location.pathname, { replace: true, state: null });
    api
      .get('/user/sign-in-desktop', ZSignInDesktop)
      .then((a) => setOpens(a.opens))
      .catch(() => undefined); // the desktops screen is the answer then
  }, [location.state, location.pathname, navigate]);

  const desktop = opens ? desktops?.find((d) => d.id === opens.desktop_id) : undefined;

  useEffect(() => {
    if (!opens || !desktop || viewing.current) return;
    const stop = (err?: unknown) => {
      if (err) handleError(err);
      setOpens(null);
    };
    if (ready(desktop, opens.viewer)) {
      viewing.current = true;
      fetchViewer(opens.desktop_id, opens.viewer)
        .then((answer) => {
          if (answer.kind !== 'browser') return stop();
          const url = new URL(browserViewerUrl(answer), window.location.href);
          url.searchParams.set(VIEWER_HOME_PARAM, '1');
          window.location.assign(url.href);
        })
        .catch((err: unknown) => {
          viewing.current = false;
          stop(err);
        });
    } else if (statusIn(STARTABLE, desktop.state) && !started.current) {
      started.current = true;
      desktopCall('start', opens.desktop_id)
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
        <Button variant="default" onClick={() => setOpens(null)} data-testid="sign-in-opening-list">
          {t('desktops.sign_in_open.show_list')}
        </Button>
      </Stack>
    </Modal>
  );
}
