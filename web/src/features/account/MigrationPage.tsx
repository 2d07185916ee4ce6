import { Link } from 'react-router';
import { Alert, Button, Stack, Text } from '@mantine/core';
import { IconCircleCheck } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AuthCard } from '../../layout/BareLayout';
import './texts';

/** Shown after an import: what moved to this account. */
export default function MigrationPage() {
  const { t } = useTranslation();
  return (
    <AuthCard title={t('account.migration.heading')}>
      <Stack>
        <Alert color="teal" icon={<IconCircleCheck size={18} />} data-testid="migration-done">
          <Text size="sm">{t('account.migration.body')}</Text>
        </Alert>
        <Button component={Link} to="/desktops" data-testid="migration-to-desktops">
          {t('account.migration.to_desktops')}
        </Button>
      </Stack>
    </AuthCard>
  );
}
