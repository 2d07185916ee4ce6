import { Box, Loader, ThemeIcon } from '@mantine/core';
import { IconDeviceDesktop, IconDeviceDesktopOff } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { desktopState, type TDesktop } from '@vdi/contracts';
import { screenshotPath } from '../../entities/desktop/api';
import { useScreenshotUrl } from '../../entities/desktop/use-screenshot';
import classes from './DesktopsPage.module.css';
import { builtInText } from '../../lib/built-in-text';

export const SCREENSHOT_REFRESH_MS = 10_000;

/** The running machine's screen, refreshed every 10 s; a calm placeholder otherwise (or when it fails). */
export function Thumbnail({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const state = desktopState(d.state);
  const running = state === 'started' || state === 'waitingip' || state === 'paused';
  const url = useScreenshotUrl(['desktops', d.id, 'screenshot'], screenshotPath(d.id), running, SCREENSHOT_REFRESH_MS);

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
