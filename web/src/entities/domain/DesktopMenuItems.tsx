import { useNavigate } from 'react-router';
import { Button, Menu } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconDeviceDesktopPlus, IconEdit, IconTemplate } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { desktopState, type TDesktop } from '@vdi/contracts';
import { userQuery } from '../../lib/queries';
import '../../i18n/areas/content';

const TEMPLATE_ROLES = ['admin', 'manager', 'advanced'];

/** "Edit" and "Make template" in a desktop's menu: stopped, non-server desktops only (spec core §4). */
export function DesktopMenuItems({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { data: user } = useQuery(userQuery);
  const ok = desktopState(d.state) === 'stopped' && !d.server && d.editable;
  const hint = d.server ? t('domain_edit.locked_server') : t('domain_edit.must_stop');
  return (
    <>
      <Menu.Item leftSection={<IconEdit size={16} />} disabled={!ok} title={ok ? undefined : hint} onClick={() => void navigate(`/domain/edit?id=${encodeURIComponent(d.id)}`)} data-testid="desktop-edit">
        {t('domain_edit.menu_edit')}
      </Menu.Item>
      {user && TEMPLATE_ROLES.includes(user.role) && d.type === 'persistent' && (
        <Menu.Item leftSection={<IconTemplate size={16} />} disabled={!ok} title={ok ? undefined : hint} onClick={() => void navigate(`/templates/new?desktop=${encodeURIComponent(d.id)}`)} data-testid="desktop-make-template">
          {t('domain_edit.menu_make_template')}
        </Menu.Item>
      )}
    </>
  );
}

/** The desktops page header's "New desktop" (to /desktops/new). */
export function NewDesktopButton() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  return (
    <Button leftSection={<IconDeviceDesktopPlus size={16} />} onClick={() => void navigate('/desktops/new')} data-testid="new-desktop">
      {t('new_desktop.button')}
    </Button>
  );
}
