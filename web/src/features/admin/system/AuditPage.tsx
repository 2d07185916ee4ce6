import { useState } from 'react';
import { Alert, Badge, Button, Code, Group, Pagination, Paper, ScrollArea, Select, SimpleGrid, Skeleton, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { useDebouncedValue, useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconDownload, IconFilterOff, IconHistory, IconSearch } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { useTranslation } from 'react-i18next';
import { AUDIT_ACTIONS, AUDIT_FAMILIES, auditActionKey, type TAuditEntry, type TAuditQuery } from '@vdi/contracts';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { auditQuery, downloadAuditCsv } from './api';
import { useAuditLive } from './live';
import '../../../i18n/areas/admin-system';
import { builtInText } from '../../../lib/built-in-text';

const PER_PAGE = 50;
const COLORS: Record<string, string> = { auth: 'blue', two_factor: 'blue', user: 'grape', settings: 'orange', category: 'teal', viewer: 'red', recycle_bin: 'gray', desktop: 'indigo', template: 'cyan', media: 'cyan', deployment: 'cyan' };

type Filters = { actor: string; action: string | null; object: string; from: string; to: string };
const EMPTY: Filters = { actor: '', action: null, object: '', from: '', to: '' };

function useActionLabel() {
  const { t } = useTranslation();
  return (action: string) => t(`admin_system.audit.actions.${auditActionKey(action)}`, { defaultValue: action });
}

function Detail({ e }: { e: TAuditEntry }) {
  const entries = Object.entries(e.detail);
  if (!entries.length) return null;
  return (
    <Code block={false} fz="xs" style={{ whiteSpace: 'normal', wordBreak: 'break-word' }}>
      {entries.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : JSON.stringify(v)}`).join(' · ')}
    </Code>
  );
}

/** The audit log: who did what, when and from where, filtered, paged, exported (`/isard-admin/audit`). */
export default function AuditPage() {
  const { t, i18n } = useTranslation();
  const label = useActionLabel();
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [debounced] = useDebouncedValue(filters, 300);
  const [page, setPage] = useState(1);
  const [fresh, setFresh] = useState(0);
  const q: TAuditQuery = {
    page,
    per_page: PER_PAGE,
    actor: debounced.actor.trim() || undefined,
    action: debounced.action ?? undefined,
    object: debounced.object.trim() || undefined,
    from: debounced.from || undefined,
    to: debounced.to || undefined,
  };
  const list = useQuery(auditQuery(q));
  useAuditLive(() => setFresh((n) => n + 1));
  const exporting = useAction();
  const set = (patch: Partial<Filters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setPage(1);
  };
  const filtered = JSON.stringify(filters) !== JSON.stringify(EMPTY);
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / PER_PAGE));
  // A phone gets one card per entry instead of a table it would have to scroll sideways.
  const narrow = useMediaQuery('(max-width: 48em)');

  return (
    <>
      <PageHeader
        title={t('admin_system.audit.heading')}
        subtitle={t('admin_system.audit.subheading')}
        actions={
          <Button variant="default" leftSection={<IconDownload size={16} />} loading={exporting.busy} onClick={() => exporting.run(() => downloadAuditCsv(q))} data-testid="audit-export">
            {t('admin_system.audit.export')}
          </Button>
        }
      />
      <Paper withBorder radius="md" p="md" mb="md">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 5 }} spacing="sm">
          <TextInput label={t('admin_system.audit.filters.actor')} leftSection={<IconSearch size={14} />} value={filters.actor} onChange={(e) => set({ actor: e.currentTarget.value })} data-testid="audit-filter-actor" />
          <Select
            label={t('admin_system.audit.filters.action')}
            placeholder={t('admin_system.audit.filters.any')}
            // Every action the log records, by family; a family's first entry ("… all", a prefix ending in ".") selects it whole.
            data={AUDIT_FAMILIES.map((f) => ({
              group: label(f),
              items: [
                { value: `${f}.`, label: t('admin_system.audit.families', { family: label(f) }) },
                ...AUDIT_ACTIONS.filter((a) => a.startsWith(`${f}.`)).map((a) => ({ value: a, label: label(a) })),
              ],
            }))}
            value={filters.action}
            onChange={(v) => set({ action: v })}
            clearable
            searchable
            data-testid="audit-filter-action"
          />
          <TextInput label={t('admin_system.audit.filters.object')} value={filters.object} onChange={(e) => set({ object: e.currentTarget.value })} data-testid="audit-filter-object" />
          <TextInput label={t('admin_system.audit.filters.from')} type="date" value={filters.from} onChange={(e) => set({ from: e.currentTarget.value })} data-testid="audit-filter-from" />
          <TextInput label={t('admin_system.audit.filters.to')} type="date" value={filters.to} onChange={(e) => set({ to: e.currentTarget.value })} data-testid="audit-filter-to" />
        </SimpleGrid>
        <Group justify="space-between" mt="sm">
          <Text size="sm" c="dimmed" data-testid="audit-total">
            {list.data ? t('admin_system.audit.total', { count: list.data.total }) : ' '}
            {fresh > 0 && page > 1 ? ` · ${t('admin_system.audit.new_entries', { count: fresh })}` : ''}
          </Text>
          {filtered && (
            <Button variant="subtle" size="xs" leftSection={<IconFilterOff size={14} />} onClick={() => set(EMPTY)} data-testid="audit-clear">
              {t('admin_system.audit.clear')}
            </Button>
          )}
        </Group>
      </Paper>
      {exporting.error && (
        <Alert color="red" mb="md" icon={<IconAlertCircle size={18} />} role="alert">
          {exporting.error}
        </Alert>
      )}
      {list.error ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_system.load_failed')} data-testid="audit-load-error">
          {errorMessage(t, list.error, (k) => i18n.exists(k))}
        </Alert>
      ) : list.isPending ? (
        <Skeleton height={320} radius="md" />
      ) : list.data.items.length === 0 ? (
        <EmptyState
          icon={<IconHistory size={28} />}
          title={t(filtered ? 'admin_system.audit.no_match' : 'admin_system.audit.empty_title')}
          body={filtered ? undefined : t('admin_system.audit.empty_body')}
        />
      ) : (
        <Stack gap="md">
          {narrow ? (
            <Stack gap="xs" data-testid="audit-cards">
              {list.data.items.map((e) => (
                <Paper key={e.id} withBorder radius="md" p="sm" data-testid="audit-row" data-action={e.action}>
                  <Group justify="space-between" gap="xs" wrap="nowrap" align="flex-start">
                    <Badge variant="light" color={COLORS[e.action.split('.')[0]!] ?? 'gray'} radius="sm" tt="none">
                      {label(e.action)}
                    </Badge>
                    <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                      {dayjs(e.at).format('YYYY-MM-DD HH:mm:ss')}
                    </Text>
                  </Group>
                  <Text size="sm" mt={6}>
                    <b>{e.actor_name || t('admin_system.audit.system')}</b>
                    {e.actor_role ? ` · ${t(`roles.${e.actor_role}`, { defaultValue: e.actor_role })}` : ''}
                    {e.address ? ` · ${e.address}` : ''}
                  </Text>
                  {(e.object_name || e.object_id) && (
                    <Text size="sm" c="dimmed">
                      {e.object_type ? `${e.object_type}: ` : ''}
                      {builtInText(t, e.object_name) || e.object_id}
                    </Text>
                  )}
                  <Detail e={e} />
                </Paper>
              ))}
            </Stack>
          ) : (
          <Paper withBorder radius="md">
            <ScrollArea type="auto">
              <Table striped highlightOnHover verticalSpacing="xs" miw={860} data-testid="audit-table">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>{t('admin_system.audit.columns.when')}</Table.Th>
                    <Table.Th>{t('admin_system.audit.columns.who')}</Table.Th>
                    <Table.Th>{t('admin_system.audit.columns.what')}</Table.Th>
                    <Table.Th>{t('admin_system.audit.columns.object')}</Table.Th>
                    <Table.Th>{t('admin_system.audit.columns.address')}</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.data.items.map((e) => (
                    <Table.Tr key={e.id} data-testid="audit-row" data-action={e.action}>
                      <Table.Td style={{ whiteSpace: 'nowrap' }}>
                        <Tooltip label={e.at}>
                          <Text size="sm">{dayjs(e.at).format('YYYY-MM-DD HH:mm:ss')}</Text>
                        </Tooltip>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" fw={500}>
                          {e.actor_name || t('admin_system.audit.system')}
                        </Text>
                        {e.actor_role && (
                          <Text size="xs" c="dimmed">
                            {t(`roles.${e.actor_role}`, { defaultValue: e.actor_role })}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Stack gap={4} align="flex-start">
                          <Badge variant="light" color={COLORS[e.action.split('.')[0]!] ?? 'gray'} radius="sm" tt="none">
                            {label(e.action)}
                          </Badge>
                          <Detail e={e} />
                        </Stack>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm">{builtInText(t, e.object_name) || e.object_id || '—'}</Text>
                        {e.object_type && (
                          <Text size="xs" c="dimmed">
                            {e.object_type}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" ff="monospace">
                          {e.address ?? '—'}
                        </Text>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </ScrollArea>
          </Paper>
          )}
          {pages > 1 && (
            <Group justify="center">
              <Pagination total={pages} value={page} onChange={setPage} size="sm" data-testid="audit-pages" />
            </Group>
          )}
        </Stack>
      )}
    </>
  );
}
