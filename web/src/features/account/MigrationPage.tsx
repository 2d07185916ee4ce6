import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { Alert, Button, Loader, Stack, Text } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck, IconInfoCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import dayjs from 'dayjs';
import { ZMigrationResult } from '@vdi/contracts';
import { api } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { AuthCard } from '../../components/AuthCard';
import '../../i18n/areas/account';
import { HANDLES_ERROR } from '../../lib/queries';

/** The migration this account received (what moved, from whom, when), or a note that it received none. */
export default function MigrationPage() {
  const { t, i18n } = useTranslation();
  const result = useQuery({ queryKey: ['user', 'migration-result'], queryFn: () => api.get('/user_migration/result', ZMigrationResult), meta: HANDLES_ERROR });
  const migration = result.data?.migration;
  return (
    <AuthCard title={t(migration === null ? 'account.migration.none_heading' : migration ? 'account.migration.heading' : 'routes.migration')}>
      <Stack>
        {result.isPending && <Loader size="sm" mx="auto" />}
        {result.isError && (
          <Alert color="red" icon={<IconAlertTriangle size={18} />} role="alert">
            {errorMessage(t, result.error, (k) => i18n.exists(k))}
          </Alert>
        )}
        {migration && (
          <Alert color="teal" icon={<IconCircleCheck size={18} />} data-testid="migration-done">
            <Text size="sm">
              {t('account.migration.body', {
                origin: migration.origin_username,
                date: dayjs(migration.migrated_at * 1000).format('YYYY-MM-DD HH:mm'),
                desktops: migration.desktops,
                templates: migration.templates,
                media: migration.media,
                deployments: migration.deployments,
              })}
            </Text>
          </Alert>
        )}
        {migration === null && (
          <Alert color="gray" icon={<IconInfoCircle size={18} />} data-testid="migration-none">
            <Text size="sm">{t('account.migration.none_body')}</Text>
          </Alert>
        )}
        <Button component={Link} to="/desktops" data-testid="migration-to-desktops">
          {t('account.migration.to_desktops')}
        </Button>
      </Stack>
    </AuthCard>
  );
}
