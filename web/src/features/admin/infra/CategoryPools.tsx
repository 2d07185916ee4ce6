import { Alert, Badge, Group, Paper, Select, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertCircle } from '@tabler/icons-react';
import { SHARED_STORAGE_POOL as SHARED, type TAdminCategory, type TAdminCategoryList } from '@vdi/contracts';
import { useTranslation } from 'react-i18next';
import { formatBytes } from '../../../entities/format';
import { builtInText } from '../../../lib/built-in-text';
import { notifySuccess } from '../../../lib/error-handler';
import { useAction } from '../../../lib/use-action';
import { fullBadge } from '../shared/console';
import { categoryPoolsQuery, hypervisorsQuery, setCategoryPool } from './api';
import '../../../i18n/areas/admin-infra';


/**
 * The storage pools as categories see them (admins; issue 25, "mapped to categories as in the
 * original"): the shared storage folder and every pool a hypervisor declares, where each is and how
 * much is free there, the categories whose desktops' disks go to it, and a choice per category.
 */
export function CategoryPools() {
  const { t, i18n } = useTranslation();
  const hosts = useQuery(hypervisorsQuery);
  const categories = useQuery(categoryPoolsQuery);
  const client = useQueryClient();
  const { run, busy, error } = useAction();
  if (hosts.error || categories.error || !hosts.data || !categories.data) return null;
  const cats = categories.data.items;
  const poolOf = (c: TAdminCategory) => c.storage_pool ?? SHARED;
  // Every pool a host declares, the shared one first, and any a category names that no host has.
  const names = [...new Set([SHARED, ...hosts.data.items.flatMap((h) => h.pools.map((p) => p.name)).sort(), ...cats.map(poolOf)])];
  const label = (name: string) => (name === SHARED ? t('admin_infra.storage.category_pools.shared') : name);
  const choose = (c: TAdminCategory, pool: string | null) => {
    if (!pool || pool === poolOf(c)) return;
    void run(async () => {
      const saved = await setCategoryPool(c.id, pool);
      client.setQueryData<TAdminCategoryList>(categoryPoolsQuery.queryKey, (list) => list && { ...list, items: list.items.map((x) => (x.id === saved.id ? saved : x)) });
      notifySuccess(t('admin_infra.storage.category_pools.saved', { category: builtInText(t, c.name), pool: label(pool) }));
    });
  };

  return (
    <Paper withBorder radius="md" p="md" mb="md" data-testid="category-pools">
      <Title order={4}>{t('admin_infra.storage.category_pools.heading')}</Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t('admin_infra.storage.category_pools.intro')}
      </Text>
      {error && (
        <Alert color="red" icon={<IconAlertCircle size={18} />} mb="sm" data-testid="category-pools-error">
          {error}
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} mb="md">
        {names.map((name) => {
          const on = hosts.data.items.flatMap((h) => h.pools.filter((p) => p.name === name).map((p) => ({ host: builtInText(t, h.name), ...p })));
          const users = cats.filter((c) => poolOf(c) === name);
          return (
            <Paper key={name} withBorder radius="md" p="sm" data-testid="category-pool" data-pool={name}>
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <Text fw={600} style={{ wordBreak: 'break-word' }}>
                  {label(name)}
                </Text>
                {on.length === 0 && (
                  <Badge variant="light" color="red" styles={fullBadge}>
                    {t('admin_infra.storage.category_pools.no_host')}
                  </Badge>
                )}
              </Group>
              {on.map((p) => (
                <Text key={`${p.host}-${p.path}`} size="xs" c="dimmed" data-testid="category-pool-host">
                  {t('admin_infra.storage.category_pools.host_free', { host: p.host, free: formatBytes(p.free_bytes, i18n.language), total: formatBytes(p.capacity_bytes, i18n.language) })}
                </Text>
              ))}
              <Text size="sm" mt={6} data-testid="category-pool-categories">
                {users.length ? users.map((c) => builtInText(t, c.name)).join(', ') : t('admin_infra.storage.category_pools.no_categories')}
              </Text>
            </Paper>
          );
        })}
      </SimpleGrid>
      <Table.ScrollContainer minWidth={0}>
        <Table verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('admin_infra.storage.category_pools.category')}</Table.Th>
              <Table.Th>{t('admin_infra.storage.category_pools.pool')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {cats.map((c) => (
              <Table.Tr key={c.id} data-testid="category-pool-row">
                <Table.Td style={{ overflowWrap: 'break-word', minWidth: '8rem' }}>{builtInText(t, c.name)}</Table.Td>
                <Table.Td>
                  <Select
                    aria-label={t('admin_infra.storage.category_pools.choose', { category: builtInText(t, c.name) })}
                    data={names.map((n) => ({ value: n, label: label(n) }))}
                    value={poolOf(c)}
                    onChange={(v) => choose(c, v)}
                    disabled={busy}
                    allowDeselect={false}
                    size="xs"
                    data-testid="category-pool-select"
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Paper>
  );
}
