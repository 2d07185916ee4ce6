import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { Button, Group, Paper, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconRefresh } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/errors';
import { RECONNECT_BOUND_MS, renewWithin } from '../../entities/viewer/reconnect';
import classes from './VncViewerPage.module.css';
import { VIEWER_HOME_PARAM } from '../../lib/sign-in-steps';

// What the VNC and RDP viewer pages share around the screen (the toolbar: toolbar/ViewerToolbar.tsx): the card shown when the
// connection ended, closing the tab and asking for a new ticket.

/** Closes the viewer's tab; a tab the portal did not open cannot be closed by the page, which `tried` then says. */
export function useCloseTab(disconnect: () => void) {
  const [tried, setTried] = useState(false);
  const close = useCallback(() => {
    disconnect();
    // The portal's own tab (a viewer opened at sign-in) goes back to the desktops screen.
    if (new URLSearchParams(window.location.search).has(VIEWER_HOME_PARAM)) return void window.location.assign('/desktops');
    window.close();
    setTimeout(() => setTried(true), 300);
  }, [disconnect]);
  return { close, tried };
}

/** A fresh ticket for the same desktop (a signed-in person may ask again); a refusal is shown as text. */
export function useReconnect<T>(fetchTicket: (() => Promise<T>) | null, setTicket: (ticket: T) => void) {
  const { i18n } = useTranslation();
  const [reconnecting, setReconnecting] = useState(false);
  const [reconnectError, setReconnectError] = useState<string | null>(null);
  const reconnect = useCallback(async () => {
    if (!fetchTicket) return;
    setReconnecting(true);
    setReconnectError(null);
    try {
      setTicket(await fetchTicket());
    } catch (err) {
      setReconnectError(errorMessage(i18n.t.bind(i18n), err, (k) => i18n.exists(k)));
    } finally {
      setReconnecting(false);
    }
  }, [fetchTicket, setTicket, i18n]);
  return { reconnect, reconnecting, reconnectError };
}

/**
 * Reconnects by itself after a drop (`lost` is 'dropped': the connection went away while the
 * desktop may still run): a fresh ticket from `fetchTicket` handed to `setTicket`, which opens a new
 * connection; that one failing too ('dropped' or 'failed': a process still starting may not reach
 * the screen in time) before `connected` tries again after a short backoff, all within
 * RECONNECT_BOUND_MS of the first drop. `active` while it is under way (the page says
 * "Reconnecting…"); a renewal refused (the desktop no longer runs, access ended) or the bound spent
 * ends it, with the refusal in `error`, and the page shows its closed screen.
 */
export function useAutoReconnect<T>(lost: 'dropped' | 'failed' | null, connected: boolean, fetchTicket: (() => Promise<T>) | null, setTicket: (ticket: T) => void) {
  const { i18n } = useTranslation();
  const [active, setActive] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** When the drops being reconnected began, and how many attempts since. */
  const since = useRef<{ at: number; attempts: number } | null>(null);
  useEffect(() => {
    if (!connected) return;
    since.current = null;
    setActive(false);
    setError(null);
  }, [connected]);
  useEffect(() => {
    if (!lost || !fetchTicket) return;
    if (lost === 'failed' && !since.current) return; // a first connection that failed says why instead
    since.current ??= { at: Date.now(), attempts: 0 };
    const left = RECONNECT_BOUND_MS - (Date.now() - since.current.at);
    if (left <= 0) {
      since.current = null;
      setActive(false);
      return;
    }
    setActive(true);
    const aborted = new AbortController();
    const first = since.current.attempts;
    renewWithin(
      () => {
        if (since.current) since.current.attempts++;
        return fetchTicket();
      },
      { boundMs: left, signal: aborted.signal, first },
    ).then(
      (ticket) => {
        if (!aborted.signal.aborted) setTicket(ticket);
      },
      (err: unknown) => {
        if (aborted.signal.aborted) return;
        since.current = null;
        setActive(false);
        setError(errorMessage(i18n.t.bind(i18n), err, (k) => i18n.exists(k)));
      },
    );
    return () => aborted.abort();
  }, [lost, fetchTicket, setTicket, i18n]);
  return { active, error };
}

/**
 * The card over a viewer whose connection ended: what happened, then Reconnect (when the person
 * may ask for a new ticket) and the page's last action (close the tab, or go to the desktops).
 */
export function ViewerEnded({
  testId, width, icon, color, title, body, canReconnect, reconnect, closeTried, action,
}: {
  testId: string;
  width: number;
  icon: ReactNode;
  color: string;
  title: string;
  /** The explanation (its own Text, with its own testid). */
  body: ReactNode;
  canReconnect: boolean;
  reconnect: ReturnType<typeof useReconnect>;
  closeTried: boolean;
  action: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <div className={classes.overlay}>
      <Paper withBorder radius="lg" p="xl" maw={width} w="100%" className={classes.card} data-testid={testId}>
        <Stack align="center" gap="md">
          <ThemeIcon size={56} radius="xl" variant="light" color={color}>
            {icon}
          </ThemeIcon>
          <Title order={1} size="h4" ta="center">
            {title}
          </Title>
          {body}
          {reconnect.reconnectError && (
            <Text size="sm" c="red" ta="center" data-testid="viewer-reconnect-error">
              {reconnect.reconnectError}
            </Text>
          )}
          <Group justify="center">
            {canReconnect && (
              <Button variant="default" leftSection={<IconRefresh size={16} />} loading={reconnect.reconnecting} onClick={() => void reconnect.reconnect()} data-testid="viewer-reconnect">
                {t('viewer.reconnect')}
              </Button>
            )}
            {action}
          </Group>
          {closeTried && (
            <Text size="xs" c="dimmed" ta="center">
              {t('viewer.close_manually')}
            </Text>
          )}
        </Stack>
      </Paper>
    </div>
  );
}
