import { useEffect } from 'react';
import { notifications } from '@mantine/notifications';
import { IconHeadset } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { onEvent } from '../../lib/socket';

/** How long the notice stays (it also closes by hand). */
const SUPPORT_NOTICE_MS = 30_000;

/**
 * Live `support_viewer`: someone of support opened the screen of one of the person's desktops
 * from the administration console; the portal says so at once, whichever screen is open.
 */
export function useSupportNotice(enabled: boolean) {
  const { t } = useTranslation();
  useEffect(() => {
    if (!enabled) return;
    return onEvent('support_viewer', (e) => {
      notifications.show({
        id: `support-${e.desktop_id}`,
        title: t('support_notice.title'),
        message: t('support_notice.body', { by: e.by, name: e.desktop_name }),
        color: 'orange',
        icon: <IconHeadset size={18} />,
        autoClose: SUPPORT_NOTICE_MS,
        withBorder: true,
        'data-testid': 'support-notice',
        'data-desktop': e.desktop_id,
      } as Parameters<typeof notifications.show>[0]);
    });
  }, [enabled, t]);
}
