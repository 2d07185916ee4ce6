import { useState } from 'react';
import {
  Alert, Badge, Button, Checkbox, Group, Modal, Pagination, Paper, Progress, ScrollArea, Select, SimpleGrid, Skeleton, Stack, Table, Text, TextInput, Title,
} from '@mantine/core';
import { useDebouncedValue, useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconAlertTriangle, IconCircleCheck, IconDatabase, IconFileAlert, IconSearch, IconStethoscope, IconTrash } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { ADMIN_STORAGE_KINDS, STORAGE_STATUSES, type TAdminStorageCheck, type TAdminStorageItem } from '@vdi/contracts';
import { useTranslation } from 'react-i18next';
import { userQuery } from '../../../lib/queries';
import { notifySuccess } from '../../../lib/error-handler';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { fullBadge } from '../shared/console';
import { CategoryPools } from './CategoryPools';
import { poolsQuery, removeOrphans, runStorageCheck, storageQuery } from './api';
import { percent } from './format';
import { formatBytes } from '../../../entities/format';
import '../../../i18n/areas/admin-infra';
import { builtInText } from '../../../lib/built-in-text';

const PER_PAGE = 25;
const STATUS_COLOR: Record<string, string> = { ready: 'teal', creating: 'blue', maintenance: 'yellow', recycled: 'gray', deleted: 'gray', failed: 'red' };

/** The pools (admins): each folder with its file system's free space. */
function Pools() {
  const { t, i18n } = useTranslation();
  const { data, error } = useQuery(poolsQuery);
  if (error) return null;
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} mb="md" data-testid="storage-pools">
      {(data?.items ?? []).map((p) => {
        const used = percent(p.used, p.total);
        return (
          <Paper key={p.id} withBorder radius="md" p="md" data-testid="storage-pool" data-kind={p.kind}>
            <Group justify="space-between" wrap="nowrap">
              <Text fw={600}>{t(`admin_infra.storage.pools.${p.kind}`, { defaultValue: p.kind })}</Text>
              <Badge variant="light" color={p.available ? 'teal' : 'red'} styles={fullBadge}>
                {t(p.available ? 'admin_infra.storage.pools.available' : 'admin_infra.storage.pools.unavailable')}
              </Badge>
            </Group>
            <Text size="xs" c="dimmed" ff="monospace" truncate>
              {p.path}
            </Text>
            <Progress value={used} color={used >= 90 ? 'red' : used >= 75 ? 'orange' : 'teal'} mt="sm" size="sm" aria-label={t('admin_infra.storage.pools.used')} />
            <Text size="sm" mt={6} data-testid="storage-pool-free">
              {t('admin_infra.storage.pools.free', { free: formatBytes(p.free, i18n.language), total: formatBytes(p.total, i18n.language) })}
            </Text>
            <Text size="xs" c="dimmed">
              {t('admin_infra.storage.pools.items', { count: p.items, size: formatBytes(p.items_size, i18n.language) })}
            </Text>
          </Paper>
        );
      })}
    </SimpleGrid>
  );
}

/** The check: files without records and records without files; orphan files removed after confirming (admins). */
function StorageCheck({ admin }: { admin: boolean }) {
  const { t, i18n } = useTranslation();
  const [result, setResult] = useState<TAdminStorageCheck | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const checking = useAction();
  const removing = useAction();
  const check = () =>
    checking.run(async () => {
      const r = await runStorageCheck();
      setResult(r);
      setChosen(r.files_without_rows.map((f) => f.path));
    });
  const files = result?.files_without_rows ?? [];
  const rows = result?.rows_without_files ?? [];

  return (
    <Paper withBorder radius="md" p="md" mb="md" data-testid="storage-check">
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Stack gap={2}>
          <Title order={2} size="h4">
            {t('admin_infra.storage.check.title')}
          </Title>
          <Text size="sm" c="dimmed">
            {t(admin ? 'admin_infra.storage.check.description' : 'admin_infra.storage.check.description_manager')}
          </Text>
        </Stack>
        <Button leftSection={<IconStethoscope size={16} />} loading={checking.busy} onClick={() => void check()} data-testid="storage-check-run">
          {t(result ? 'admin_infra.storage.check.again' : 'admin_infra.storage.check.run')}
        </Button>
      </Group>
      {checking.error && (
        <Alert color="red" mt="md" icon={<IconAlertCircle size={16} />} role="alert">
          {checking.error}
        </Alert>
      )}
      {result && (
        <Stack gap="md" mt="md" data-testid="storage-check-result">
          <Text size="xs" c="dimmed">
            {t('admin_infra.storage.check.checked_at', { time: dayjs(result.checked_at).format('YYYY-MM-DD HH:mm:ss') })}
          </Text>
          {files.length === 0 && rows.length === 0 && (
            <Alert color="teal" icon={<IconCircleCheck size={16} />} data-testid="storage-check-clean">
              {t('admin_infra.storage.check.clean')}
            </Alert>
          )}
          {files.length > 0 && (
            <Stack gap="xs" data-testid="storage-orphans">
              <Group justify="space-between" wrap="wrap">
                <Text fw={600}>{t('admin_infra.storage.check.files_without_rows', { count: files.length })}</Text>
                <Group gap="xs">
                  <Checkbox
                    label={t('admin_infra.storage.check.select_all')}
                    checked={chosen.length === files.length}
                    indeterminate={chosen.length > 0 && chosen.length < files.length}
                    onChange={(e) => setChosen(e.currentTarget.checked ? files.map((f) => f.path) : [])}
                  />
                  <Button color="red" variant="light" size="xs" leftSection={<IconTrash size={14} />} disabled={chosen.length === 0} onClick={() => setConfirming(true)} data-testid="storage-orphans-remove">
                    {t('admin_infra.storage.check.remove', { count: chosen.length })}
                  </Button>
                </Group>
              </Group>
              {files.map((f) => (
                <div key={f.path} data-testid="storage-orphan" data-path={f.path}>
                <Checkbox
                  checked={chosen.includes(f.path)}
                  onChange={(e) => {
                      // Read now: the event's target is gone by the time the state updater runs.
                      const on = e.currentTarget.checked;
                      setChosen((c) => (on ? [...c, f.path] : c.filter((p) => p !== f.path)));
                    }}
                  label={
                    <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
                      {f.path}{' '}
                      <Text span size="xs" c="dimmed" ff="var(--mantine-font-family)">
                        · {formatBytes(f.size, i18n.language)} · {dayjs(f.modified).format('YYYY-MM-DD HH:mm')}
                      </Text>
                    </Text>
                  }
                />
                </div>
              ))}
            </Stack>
          )}
          {rows.length > 0 && (
            <Stack gap="xs" data-testid="storage-missing">
              <Text fw={600}>{t('admin_infra.storage.check.rows_without_files', { count: rows.length })}</Text>
              {rows.map((r) => (
                <Group key={`${r.type}-${r.id}`} gap="xs" wrap="nowrap" data-testid="storage-missing-row">
                  <IconFileAlert size={16} color="var(--mantine-color-red-6)" style={{ flexShrink: 0 }} />
                  <Text size="sm" style={{ wordBreak: 'break-all' }}>
                    <b>{t(`admin_infra.storage.check.types.${r.type}`)}</b> {r.type === 'media' ? r.name : r.path} · {r.user_name} · {t(`admin_infra.storage.statuses.${r.status}`, { defaultValue: r.status })}
                  </Text>
                </Group>
              ))}
            </Stack>
          )}
        </Stack>
      )}
      <Modal opened={confirming} onClose={() => setConfirming(false)} title={t('admin_infra.storage.check.confirm_title')} centered>
        <Stack>
          <Text size="sm">{t('admin_infra.storage.check.confirm_body', { count: chosen.length })}</Text>
          {removing.error && (
            <Alert color="red" icon={<IconAlertTriangle size={16} />} role="alert">
              {removing.error}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              {t('admin_infra.cancel')}
            </Button>
            <Button
              color="red"
              loading={removing.busy}
              data-testid="storage-orphans-confirm"
              onClick={() =>
                void removing.run(async () => {
                  const answer = await removeOrphans(chosen);
                  notifySuccess(t('admin_infra.storage.check.removed', { count: answer.removed.length }));
                  setConfirming(false);
                  const r = await runStorageCheck();
                  setResult(r);
                  setChosen(r.files_without_rows.map((f) => f.path));
                })
              }
            >
              {t('admin_infra.storage.check.remove', { count: chosen.length })}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Paper>
  );
}

function Chain({ d }: { d: TAdminStorageItem }) {
  if (d.chain.length === 0) return null;
  return (
    <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-all' }} data-testid="storage-chain">
      {d.chain.map((l) => `← ${l.path || l.id}`).join(' ')}
    </Text>
  );
}

/** Storage (/isard-admin/storage): every disk with its chain and owner, the pools, and the check. */
export default function StoragePage() {
  const { t, i18n } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const admin = me?.role === 'admin';
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 300);
  const [kind, setKind] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [page, setPage] = useState(1);
  const list = useQuery(storageQuery({ page, per_page: PER_PAGE, sort: 'path', order: 'asc', search: debounced.trim(), kind, status }));
  const narrow = useMediaQuery('(max-width: 48em)');
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / PER_PAGE));
  const filtered = kind !== null || status !== null || debounced.trim() !== '';
  const size = (d: TAdminStorageItem) => t('admin_infra.storage.size_of', { actual: formatBytes(d.actual_size, i18n.language), virtual: formatBytes(d.virtual_size, i18n.language) });
  const usedBy = (d: TAdminStorageItem) => (d.domains.length ? d.domains.map((x) => builtInText(t, x.name)).join(', ') : t('admin_infra.storage.unused'));
  const statusBadge = (d: TAdminStorageItem) => (
    <Badge variant="light" color={STATUS_COLOR[d.status] ?? 'gray'} styles={fullBadge}>
      {t(`admin_infra.storage.statuses.${d.status}`, { defaultValue: d.status })}
    </Badge>
  );

  return (
    <>
      <PageHeader title={t('admin_infra.storage.heading')} subtitle={t(admin ? 'admin_infra.storage.subheading' : 'admin_infra.storage.subheading_manager')} />
      {admin && <Pools />}
      {admin && <CategoryPools />}
      <StorageCheck admin={admin} />
      <Paper withBorder radius="md" p="md" mb="md">
        <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
          <TextInput label={t('admin_infra.search')} placeholder={t('admin_infra.storage.search_hint')} leftSection={<IconSearch size={14} />} value={search} onChange={(e) => { setSearch(e.currentTarget.value); setPage(1); }} data-testid="storage-search" />
          <Select label={t('admin_infra.storage.kind')} data={ADMIN_STORAGE_KINDS.map((k) => ({ value: k, label: t(`admin_infra.storage.kinds.${k}`) }))} placeholder={t('admin_infra.any')} value={kind} onChange={(v) => { setKind(v); setPage(1); }} clearable />
          <Select label={t('admin_infra.storage.status')} data={STORAGE_STATUSES.map((s) => ({ value: s, label: t(`admin_infra.storage.statuses.${s}`) }))} placeholder={t('admin_infra.any')} value={status} onChange={(v) => { setStatus(v); setPage(1); }} clearable />
        </SimpleGrid>
        <Text size="sm" c="dimmed" mt="sm" data-testid="storage-total">
          {list.data ? t('admin_infra.storage.total', { count: list.data.total }) : ' '}
        </Text>
      </Paper>
      {list.error && !list.data ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_infra.load_failed')} data-testid="storage-error">
          {errorMessage(t, list.error, (k) => i18n.exists(k))}
        </Alert>
      ) : list.isPending || !list.data ? (
        <Skeleton height={300} radius="md" />
      ) : list.data.items.length === 0 ? (
        <EmptyState icon={<IconDatabase size={28} />} title={t(filtered ? 'admin_infra.no_match' : 'admin_infra.storage.empty_title')} body={filtered ? undefined : t('admin_infra.storage.empty_body')} />
      ) : (
        <Stack gap="md">
          {narrow ? (
            <Stack gap="xs">
              {list.data.items.map((d) => (
                <Paper key={d.id} withBorder radius="md" p="sm" data-testid="storage-row">
                  <Group justify="space-between" wrap="nowrap" gap="xs">
                    <Text size="sm" ff="monospace" fw={600} style={{ wordBreak: 'break-all' }}>
                      {d.path}
                    </Text>
                    {statusBadge(d)}
                  </Group>
                  <Chain d={d} />
                  <Text size="sm" mt={4}>
                    {t(`admin_infra.storage.kinds.${d.kind}`, { defaultValue: d.kind })} · {d.user_name} · {builtInText(t, d.category_name)}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {size(d)} · {usedBy(d)}
                  </Text>
                </Paper>
              ))}
            </Stack>
          ) : (
            <Paper withBorder radius="md">
              <ScrollArea type="auto">
                <Table striped highlightOnHover verticalSpacing="xs" miw={960} data-testid="storage-table">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('admin_infra.storage.columns.disk')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.kind')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.owner')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.used_by')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.size')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.status')}</Table.Th>
                      <Table.Th>{t('admin_infra.storage.columns.last_used')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {list.data.items.map((d) => (
                      <Table.Tr key={d.id} data-testid="storage-row">
                        <Table.Td maw={360}>
                          <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
                            {d.path}
                          </Text>
                          <Chain d={d} />
                          {d.derivatives > 0 && (
                            <Text size="xs" c="dimmed">
                              {t('admin_infra.storage.derivatives', { count: d.derivatives })}
                            </Text>
                          )}
                        </Table.Td>
                        <Table.Td>{t(`admin_infra.storage.kinds.${d.kind}`, { defaultValue: d.kind })}</Table.Td>
                        <Table.Td>
                          <Text size="sm">{d.user_name}</Text>
                          <Text size="xs" c="dimmed">
                            {builtInText(t, d.category_name)}
                          </Text>
                        </Table.Td>
                        <Table.Td maw={220}>
                          <Text size="sm" lineClamp={2}>
                            {usedBy(d)}
                          </Text>
                        </Table.Td>
                        <Table.Td style={{ whiteSpace: 'nowrap' }}>
                          <Text size="sm">{formatBytes(d.actual_size, i18n.language)}</Text>
                          <Text size="xs" c="dimmed">
                            {t('admin_infra.storage.of_virtual', { size: formatBytes(d.virtual_size, i18n.language) })}
                          </Text>
                        </Table.Td>
                        <Table.Td>{statusBadge(d)}</Table.Td>
                        <Table.Td style={{ whiteSpace: 'nowrap' }}>{d.last_used ? dayjs(d.last_used).format('YYYY-MM-DD HH:mm') : '—'}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollArea>
            </Paper>
          )}
          {pages > 1 && (
            <Group justify="center">
              <Pagination total={pages} value={page} onChange={setPage} size="sm" />
            </Group>
          )}
        </Stack>
      )}
    </>
  );
}
