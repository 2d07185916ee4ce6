import { Alert, Badge, Button, Card, Group, SimpleGrid, Skeleton, Stack, Table, Text, Title, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { IconArrowsExchange, IconFileExport, IconKey, IconMail, IconMailQuestion, IconShieldLock } from '@tabler/icons-react';
import { QUOTA_FIELDS, ZMigrationEnabled, type TLanguage, type TQuota, type TUser } from '@vdi/contracts';
import { PageHeader } from '../../components/PageHeader';
import { changeLanguage, languageChoices } from '../../components/LanguageMenu';
import { toOfferedLanguage } from '../../i18n';
import { configQuery, userQuery, HANDLES_ERROR } from '../../lib/queries';
import { api } from '../../lib/api';
import { ACCOUNT_ACTIONS, AccountDialog, type AccountAction } from './AccountDialogs';
import { UserAvatar } from '../../entities/user/UserAvatar';
import { ApiTokensCard } from './ApiTokensCard';
import { TwoFactorCard } from './TwoFactorCard';
import { SignInDesktopCard } from './SignInDesktopCard';
import '../../i18n/areas/account';
import { builtInText } from '../../lib/built-in-text';

function Field({ label, value, testId }: { label: string; value: React.ReactNode; testId?: string }) {
  return (
    <div data-testid={testId}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div">
        {value || '—'}
      </Text>
    </div>
  );
}

const migrationQuery = (way: 'export' | 'import', provider: string) => ({
  queryKey: ['migration', way, provider],
  queryFn: () => api.get(`/authentication/${way}/${encodeURIComponent(provider)}`, ZMigrationEnabled),
  staleTime: 60_000,
  // Without an answer the page offers neither.
  meta: HANDLES_ERROR,
});

/** Sizes in GB are shown rounded (spec 001 §9); counts are whole already. */
const round = (n: number) => Math.round(n * 100) / 100;

const LEVELS = [
  ['user', 'user_quota'],
  ['group', 'group_quota'],
  ['category', 'category_quota'],
] as const;

/** Used beside the quota of each level; the column of the applied level is highlighted. */
function QuotaTable({ user }: { user: TUser }) {
  const { t } = useTranslation();
  const levels = user.quotas;
  const shown = QUOTA_FIELDS.filter((f) => LEVELS.some(([l]) => levels[l] && (levels[l] as TQuota)[f] > 0) || user.used[f] > 0);
  const cell = (q: TQuota | false, f: (typeof QUOTA_FIELDS)[number]) => (q ? round(q[f]) : '—');
  return (
    <Table.ScrollContainer minWidth={420}>
      <Table striped verticalSpacing={6} data-testid="quota-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th />
            <Table.Th ta="right">{t('profile.used')}</Table.Th>
            {LEVELS.map(([level, applied]) => {
              const on = user.quota !== false && user.restriction_applied === applied;
              return (
                <Table.Th key={level} ta="right" bg={on ? 'var(--mantine-primary-color-light)' : undefined} data-applied={on || undefined} data-testid={`quota-level-${level}`}>
                  <Stack gap={2} align="flex-end">
                    <span>{t(`account.level_${level}`)}</span>
                    {on ? (
                      <Badge size="xs" variant="filled">
                        {t('account.applied')}
                      </Badge>
                    ) : (
                      !levels[level] && (
                        <Text span size="xs" c="dimmed" fw={400}>
                          {t('account.not_set')}
                        </Text>
                      )
                    )}
                  </Stack>
                </Table.Th>
              );
            })}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {shown.map((f) => (
            <Table.Tr key={f}>
              <Table.Td>{t(`profile.quota_items.${f}`)}</Table.Td>
              <Table.Td ta="right" fw={600}>
                {round(user.used[f])}
              </Table.Td>
              {LEVELS.map(([level, applied]) => (
                <Table.Td key={level} ta="right" bg={user.quota !== false && user.restriction_applied === applied ? 'var(--mantine-primary-color-light)' : undefined}>
                  {cell(levels[level], f)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export default function ProfilePage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const { action: rawAction } = useParams();
  const { data: user, isLoading } = useQuery(userQuery);
  const { data: config } = useQuery(configQuery);
  const provider = user?.provider ?? 'local';
  const canImport = useQuery({ ...migrationQuery('import', provider), enabled: Boolean(user) });
  const canExport = useQuery({ ...migrationQuery('export', provider), enabled: Boolean(user) });
  if (isLoading || !user) return <Skeleton h={320} />;
  const action = ACCOUNT_ACTIONS.includes(rawAction as AccountAction) ? (rawAction as AccountAction) : null;
  const open = (a: AccountAction) => navigate(`/profile/${a}`);
  const close = () => navigate('/profile', { replace: true });
  const mailEnabled = config?.show_change_email_button ?? false;
  return (
    <>
      <PageHeader title={t('profile.heading')} subtitle={t('profile.subheading')} />
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
        <Stack gap="lg">
          <Card withBorder padding="lg">
            <Group mb="md" wrap="nowrap">
              <UserAvatar user={user} alt={t('account.avatar', { name: user.name })} size={56} data-testid="profile-avatar" />
              <div>
                <Title order={2} size="h4">
                  {user.name}
                </Title>
                <Text size="sm" c="dimmed">
                  {user.username} · {t(`roles.${user.role}`)}
                </Text>
              </div>
            </Group>
            <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="md">
              <Field label={t('profile.name')} value={user.name} />
              <Field label={t('profile.username')} value={user.username} />
              <Field
                label={t('profile.email')}
                testId="profile-email"
                value={
                  user.email && (
                    <Group gap={6}>
                      <span data-testid="profile-email-address">{user.email}</span>
                      <Badge size="xs" variant="light" color={user.email_verified ? 'teal' : 'gray'} data-testid="profile-email-status">
                        {t(user.email_verified ? 'profile.email_verified' : 'profile.email_not_verified')}
                      </Badge>
                    </Group>
                  )
                }
              />
              <Field label={t('profile.role')} value={t(`roles.${user.role}`)} />
              <Field label={t('profile.category')} value={builtInText(t, user.category_name)} />
              <Field label={t('profile.group')} value={builtInText(t, user.group_name)} />
              <Field label={t('profile.secondary_groups')} value={user.secondary_groups_names.map((g) => builtInText(t, g)).join(', ')} />
              <Field label={t('profile.provider')} value={user.provider} />
              <Field label={t('account.total_disk_size')} value={`${round(user.total_disk_size)} GB`} testId="profile-disk-size" />
              <Field label={t('account.user_storage')} value={user.user_storage ? user.user_storage.token_web : t('account.user_storage_none')} />
            </SimpleGrid>
            {user.email_pending && (
              <Alert mt="md" color="orange" variant="light" icon={<IconMailQuestion size={18} />} data-testid="profile-email-pending">
                <Group gap={6}>
                  {t('account.pending_email', { email: user.email_pending })}
                  <Badge size="xs" variant="light" color="gray">
                    {t('profile.email_not_verified')}
                  </Badge>
                </Group>
              </Alert>
            )}
          </Card>
        </Stack>
        <Stack gap="lg">
          <Card withBorder padding="lg">
            <Title order={2} size="h4" mb="sm">
              {t('account.actions')}
            </Title>
            <Group gap="sm">
              {user.provider === 'local' && (
                <Button variant="light" leftSection={<IconKey size={16} />} onClick={() => open('password')} data-testid="open-password">
                  {t('account.change_password')}
                </Button>
              )}
              {/* Without a mail server no verification link can be sent: the button stays, disabled, and says why. */}
              <Button
                variant="light"
                leftSection={<IconMail size={16} />}
                onClick={() => open('email')}
                disabled={!mailEnabled}
                aria-describedby={mailEnabled ? undefined : 'profile-email-needs-mail'}
                data-testid="open-email"
              >
                {t('account.change_email')}
              </Button>
              {canImport.data?.enabled && (
                <Button variant="light" leftSection={<IconArrowsExchange size={16} />} onClick={() => open('import')} data-testid="open-import">
                  {t('account.import_user')}
                </Button>
              )}
              {canExport.data?.enabled && (
                <Button variant="light" component={Link} to="/export-user" leftSection={<IconFileExport size={16} />} data-testid="open-export">
                  {t('account.export_user')}
                </Button>
              )}
              <Button variant="subtle" leftSection={<IconShieldLock size={16} />} onClick={() => open('vpn')} data-testid="open-vpn">
                {t('account.vpn')}
              </Button>
            </Group>
            {!mailEnabled && (
              <Text size="xs" c="dimmed" mt="xs" id="profile-email-needs-mail" data-testid="profile-email-needs-mail">
                {t('account.change_email_needs_mail')}
              </Text>
            )}
          </Card>
          <Card withBorder padding="lg">
            <Title order={2} size="h4" mb={4}>
              {t('profile.language')}
            </Title>
            <Text size="sm" c="dimmed" mb="sm">
              {t('profile.language_hint')}
            </Text>
            <Select
              data={languageChoices(t('nav.additional_languages'))}
              value={toOfferedLanguage(i18n.language) ?? 'en-US'}
              allowDeselect={false}
              onChange={(v) => v && void changeLanguage(v as TLanguage)}
              data-testid="profile-language"
              aria-label={t('profile.language')}
            />
          </Card>
          <SignInDesktopCard />
          <TwoFactorCard />
        </Stack>
      </SimpleGrid>
      <Stack mt="lg">
        <Card withBorder padding="lg">
          <Group justify="space-between" mb="sm">
            <Title order={2} size="h4">
              {t('profile.quota')}
            </Title>
            {user.quota && <Badge variant="light">{t(`profile.quota_applied.${user.restriction_applied}`)}</Badge>}
          </Group>
          {!user.quota && (
            <Text size="sm" c="dimmed" mb="sm">
              {t('profile.quota_unlimited')}
            </Text>
          )}
          <QuotaTable user={user} />
        </Card>
        <ApiTokensCard />
      </Stack>
      <AccountDialog action={action} user={user} mailEnabled={mailEnabled} importEnabled={canImport.data?.enabled ?? false} onClose={close} />
    </>
  );
}
