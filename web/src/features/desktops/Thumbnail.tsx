import { useEffect, useState } from 'react';
import { Box, Loader, ThemeIcon } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconDeviceDesktop, IconDeviceDesktopOff } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { desktopState, type TDesktop } from '@vdi/contracts';
import { fetchScreenshot } from '../../entities/desktop/api';
import classes from './DesktopsPage.module.css';
import { builtInText } from '../../lib/built-in-text';

export const SCREENSHOT_REFRESH_MS = 10_000;

/** The running machine's screen, refreshed every 10 s; a calm placeholder otherwise (or when it fails). */
export function Thumbnail({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const state = desktopState(d.state);
  const running = state === 'started' || state === 'waitingip' || state === 'paused';
  const { data: blob } = useQuery({
    queryKey: ['desktops', d.id, 'screenshot'],
    queryFn: ({ signal }) => fetchScreenshot(d.id, signal).catch(() => null),
    enabled: running,
    refetchInterval: running ? SCREENSHOT_REFRESH_MS : false,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!blob || !running) return setUrl(null);
    const u = URL.createObjectURL(blob);
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [blob, running]);

  const busy = !running && state !== 'stopped' && state !== 'failed' && state !== 'unknown' && state !== 'notCreated' && state !== 'maintenance';
  return (
    <Box className={classes.thumb} data-shot={url ? true : undefined} data-state={state}>
      {url ? (
        <img src={url} alt={t('desktops.screenshot_alt', { name: builtInText(t, d.name) })} className={classes.shot} data-testid="desktop-thumbnail" />
      ) : (
        <div className={classes.placeholder}>
          {busy ? (
            <Loader size="sm" color="indigo" type="dots" />
          ) : (
            <ThemeIcon size={52} radius="xl" variant={running ? 'light' : 'default'} color={running ? 'teal' : 'gray'} className={classes.placeholderIcon}>
              {state === 'failed' || state === 'unknown' ? <IconDeviceDesktopOff size={28} stroke={1.6} /> : <IconDeviceDesktop size={28} stroke={1.6} />}
            </ThemeIcon>
          )}
        </div>
      )}
    </Box>
  );
}
