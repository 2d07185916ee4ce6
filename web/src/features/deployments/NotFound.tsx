import { Link } from 'react-router';
import { Button } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../components/EmptyState';
import '../../i18n/areas/deployments';

/** A deployment that is gone, or not the caller's (any of its screens). */
export function DeploymentNotFound() {
  const { t } = useTranslation();
  return (
    <EmptyState
      icon={<IconAlertTriangle size={30} />}
      title={t('deployments.detail.not_found_title')}
      body={t('deployments.detail.not_found_body')}
      action={
        <Button variant="default" component={Link} to="/deployments">
          {t('deployments.back')}
        </Button>
      }
    />
  );
}
