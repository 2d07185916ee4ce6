import { IconDeviceDesktop } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';

export default function DesktopsPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t('desktops.heading')} subtitle={t('desktops.subheading')} />
      <EmptyState icon={<IconDeviceDesktop size={30} />} title={t('desktops.empty_title')} body={t('desktops.empty_body')} />
    </>
  );
}
