import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Alert, Anchor, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconCheck, IconCopy, IconLogout } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZMigrationEnabled, ZMigrationExport } from '@vdi/contracts';
import { api } from '../../lib/api';
import { session } from '../../lib/session';
import { readToken } from '../../lib/token';
import { useAction } from '../../lib/use-action';
import { AuthCard } from '../../components/AuthCard';
import { configQuery, userQuery, HANDLES_ERROR } from '../../lib/queries';
import { logout } from '../../lib/session-actions';
import '../../i18n/areas/account';

/** Generates a migration code (valid 1 hour; a new one invalidates the previous), copy, sign out (spec 001 §2). */
export default function ExportUserPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const signedIn = Boolean(session.token());
  const user = useQuery({ ...userQuery, enabled: signedIn });
  const config = useQuery({ ...configQuery, enabled: signedIn });
  const enabled = useQuery({
    queryKey: ['migration', 'export', user.data?.provider],
    enabled: Boolean(user.data),
    queryFn: () => api.get(`/authentication/export/${encodeURIComponent(user.data!.provider)}`, ZMigrationEnabled),
    meta: HANDLES_ERROR,
  });
  const [code, setCode] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const until = code ? readToken(code)?.exp : undefined;
  const generate = () =>
    run(async () => {
      const { token } = await api.post('/user_migration/export', undefined, ZMigrationExport);
      setCode(token);
    });

  if (!signedIn) {
    return (
      <AuthCard title={t('account.export.heading')}>
        <Stack>
          <Text size="sm">{t('account.export.sign_in')}</Text>
          <Button component={Link} to="/login">
            {t('common.go_to_login')}
          </Button>
        </Stack>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t('account.export.heading')} width={560}>
      <Stack>
        {config.data?.migrations_block && (
          <Alert color="orange" icon={<IconAlertCircle size={18} />} data-testid="export-forced">
            {t('account.export.forced')}
          </Alert>
        )}
        <Text size="sm" c="dimmed">
          {t('account.export.intro')}
        </Text>
        {enabled.data && !enabled.data.enabled && (
          <Alert color="orange" icon={<IconAlertCircle size={18} />} data-testid="export-not-enabled">
            {t('account.export.not_enabled')}
          </Alert>
        )}
        {error && (
          <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid="export-error">
            {error}
          </Alert>
        )}
        {code && (
          <Stack gap={6}>
            <Text size="sm" fw={600}>
              {t('account.export.code')}
            </Text>
            <Code block data-testid="export-code" style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
              {code}
            </Code>
            <Group justify="space-between">
              {until && (
                <Text size="xs" c="dimmed">
                  {t('account.export.valid_until', { time: new Date(until * 1000).toLocaleTimeString(i18n.language, { hour: '2-digit', minute: '2-digit' }) })}
                </Text>
              )}
              <CopyButton value={code}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="light" color={copied ? 'teal' : undefined} leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />} onClick={copy} data-testid="export-copy">
                    {t(copied ? 'account.export.copied' : 'account.export.copy')}
                  </Button>
                )}
              </CopyButton>
            </Group>
          </Stack>
        )}
        <Group justify="space-between">
          <Button onClick={() => void generate()} loading={busy} disabled={!enabled.data?.enabled} variant={code ? 'default' : 'filled'} data-testid="export-generate">
            {t(code ? 'account.export.regenerate' : 'account.export.generate')}
          </Button>
          <Button
            variant={code ? 'filled' : 'subtle'}
            leftSection={<IconLogout size={16} />}
            onClick={() => void logout().then(() => navigate('/login', { replace: true }))}
            data-testid="export-logout"
          >
            {t('account.export.logout')}
          </Button>
        </Group>
        {!config.data?.migrations_block && (
          <Anchor component={Link} to="/profile" size="sm" ta="center">
            {t('common.back')}
          </Anchor>
        )}
      </Stack>
    </AuthCard>
  );
}
