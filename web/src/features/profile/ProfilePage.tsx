import { Badge, Card, Group, SimpleGrid, Skeleton, Stack, Table, Text, Title, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { INTERFACE_LANGUAGES, QUOTA_FIELDS, toInterfaceLanguage, type TInterfaceLanguage } from '@vdi/contracts';
import { PageHeader } from '../../components/PageHeader';
import { changeLanguage } from '../../layout/LanguageMenu';
import { userQuery } from '../../app/queries';

function Field({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm">{value || '—'}</Text>
    </div>
  );
}

export default function ProfilePage() {
  const { t, i18n } = useTranslation();
  const { data: user, isLoading } = useQuery(userQuery);
  if (isLoading || !user) return <Skeleton h={320} />;
  const quota = user.quota;
  return (
    <>
      <PageHeader title={t('profile.heading')} subtitle={t('profile.subheading')} />
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
        <Card withBorder padding="lg">
          <Title order={2} size="h4" mb="md">
            {t('profile.account')}
          </Title>
          <SimpleGrid cols={2} spacing="md">
            <Field label={t('profile.name')} value={user.name} />
            <Field label={t('profile.username')} value={user.username} />
            <Field
              label={t('profile.email')}
              value={
                user.email && (
                  <Group gap={6}>
                    {user.email}
                    <Badge size="xs" variant="light" color={user.email_verified ? 'teal' : 'gray'}>
                      {t(user.email_verified ? 'profile.email_verified' : 'profile.email_not_verified')}
                    </Badge>
                  </Group>
                )
              }
            />
            <Field label={t('profile.role')} value={t(`roles.${user.role}`)} />
            <Field label={t('profile.category')} value={user.category_name} />
            <Field label={t('profile.group')} value={user.group_name} />
            <Field label={t('profile.secondary_groups')} value={user.secondary_groups_names.join(', ')} />
            <Field label={t('profile.provider')} value={user.provider} />
          </SimpleGrid>
        </Card>
        <Stack gap="lg">
          <Card withBorder padding="lg">
            <Title order={2} size="h4" mb={4}>
              {t('profile.language')}
            </Title>
            <Text size="sm" c="dimmed" mb="sm">
              {t('profile.language_hint')}
            </Text>
            <Select
              data={INTERFACE_LANGUAGES.map((l) => ({ value: l, label: t(`languages.${l}`) }))}
              value={toInterfaceLanguage(i18n.language) ?? 'en-US'}
              allowDeselect={false}
              onChange={(v) => v && void changeLanguage(v as TInterfaceLanguage)}
              data-testid="profile-language"
              aria-label={t('profile.language')}
            />
          </Card>
          <Card withBorder padding="lg">
            <Group justify="space-between" mb="sm">
              <Title order={2} size="h4">
                {t('profile.quota')}
              </Title>
              {quota && <Badge variant="light">{t(`profile.quota_applied.${user.restriction_applied}`)}</Badge>}
            </Group>
            {quota ? (
              <Table striped highlightOnHover verticalSpacing={6} data-testid="quota-table">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th />
                    <Table.Th ta="right">{t('profile.used')}</Table.Th>
                    <Table.Th ta="right">{t('profile.limit')}</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {QUOTA_FIELDS.filter((f) => quota[f] > 0).map((f) => (
                    <Table.Tr key={f}>
                      <Table.Td>{t(`profile.quota_items.${f}`)}</Table.Td>
                      <Table.Td ta="right">{user.used[f]}</Table.Td>
                      <Table.Td ta="right">{quota[f]}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            ) : (
              <Text size="sm" c="dimmed">
                {t('profile.quota_unlimited')}
              </Text>
            )}
          </Card>
        </Stack>
      </SimpleGrid>
    </>
  );
}
