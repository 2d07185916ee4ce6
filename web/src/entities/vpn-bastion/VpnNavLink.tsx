import { useState } from 'react';
import { NavLink } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconShieldLock } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { handleError, NOTIFY_MS } from '../../lib/error-handler';
import { HttpError } from '../../lib/api';
import { downloadVpnFile } from './api';

/** The navbar's "VPN": downloads the user's WireGuard file (seed 001 §8: 503 → maintenance, any other failure → a download-error notice). */
export function VpnNavLink({ className, onDone }: { className?: string; onDone?: () => void }) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const click = async () => {
    setBusy(true);
    try {
      await downloadVpnFile();
      onDone?.();
    } catch (err) {
      if (err instanceof HttpError && (err.status === 503 || err.status === 401)) handleError(err);
      else notifications.show({ message: t('nav.vpn_download_error'), color: 'red', autoClose: NOTIFY_MS });
    } finally {
      setBusy(false);
    }
  };
  return (
    <NavLink
      component="button"
      type="button"
      label={t('nav.vpn')}
      leftSection={<IconShieldLock size={18} stroke={1.8} />}
      className={className}
      disabled={busy}
      onClick={() => void click()}
      data-testid="nav-vpn"
    />
  );
}
