import { Menu } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconTerminal2 } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import i18n from '../../i18n';
import { configQuery } from '../../lib/queries';
import { modals } from '../../lib/modals';
import { BastionDialog } from './BastionDialog';
import '../../i18n/areas/vpn-bastion';
import { builtInText } from '../../lib/built-in-text';

/** The desktop menu's "Bastion" (when the configuration allows it): its addresses and settings in a dialog. */
export function BastionMenuItem({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const { data: config } = useQuery(configQuery);
  if (!config?.can_use_bastion) return null;
  const open = () => {
    const id = modals.open({
      title: i18n.t('bastion.title', { name: builtInText(i18n.t, d.name) }),
      size: 'lg',
      centered: true,
      children: <BastionDialog d={d} onClose={() => modals.close(id)} />,
    });
  };
  return (
    <Menu.Item leftSection={<IconTerminal2 size={16} />} onClick={open} data-testid="desktop-bastion">
      {t('bastion.menu')}
    </Menu.Item>
  );
}
