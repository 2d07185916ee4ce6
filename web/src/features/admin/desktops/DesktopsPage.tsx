import { useMemo, useState, type MouseEvent } from 'react';
import { useNavigate } from 'react-router';
import { Badge, Button, Checkbox, Collapse, Group, Paper, Select, Skeleton, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { useDebouncedValue, useMediaQuery } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { IconAdjustmentsHorizontal, IconDeviceDesktop, IconPlayerPlay, IconPlayerStop, IconPower, IconRefresh, IconSearch, IconTrash, IconTrashX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DOMAIN_STATUSES, type TAdminActionAnswer, type TAdminDesktop, type TAdminDesktopAction } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { hypervisorsQuery } from '../../../entities/hypervisor/api';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { StateBadge } from '../../../entities/desktop/StateBadge';
import { formatBytes } from '../../../entities/format';
import { openViewer } from '../../../entities/viewer/open';
import { useCodeText, ConfirmModal, BulkBar } from '../shared/console';
import { ListFooter, SortHeader, UserPicker } from '../shared/desktops-list';
import { ColumnsMenu, useColumns, type ColumnDef } from '../shared/columns';
import { DesktopCard, DesktopLink, DesktopMenu, Uptime, useNow } from './DesktopRow';
import { OwnerCell } from './owner';
import { desktopAction, desktopsQuery, refreshContent, supportViewer, type ListParams, deploymentsQuery, templatesQuery } from './api';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';
import { categoriesQuery, groupsQuery } from '../people/api';

/** Actions that ask first (they lose unsaved work or delete). */
const CONFIRMED: TAdminDesktopAction[] = ['force_stop', 'reset', 'delete', 'delete_permanent'];
/** The row menu stays at the right edge while the wide table scrolls. */
const STICKY = { position: 'sticky', right: 0, background: 'var(--mantine-color-body)', zIndex: 1 } as const;
/** The table's columns a person may hide or show (the row's page has every fact); by default those that fit 1,280 px. */
type Column = 'name' | 'owner' | 'place' | 'status' | 'uptime' | 'hypervisor' | 'memory' | 'vcpus' | 'disk' | 'accessed';
/** The width of the columns no one hides: the row's box and its menu. */
const FIXED_WIDTH = 40 + 48;

/** /isard-admin/desktops: every desktop the caller reaches, paged, sorted and filtered by the server, with actions on one or many. */
export default function DesktopsPage() {
  const { t, i18n } = useTranslation();
  const codeText = useCodeText();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const now = useNow();
  const navigate = useNavigate();
  // Phone width: cards instead of the wide table.
  const phone = useMediaQuery('(max-width: 48em)') ?? false;
  const [params, setParams] = useState<ListParams>({ page: 1, per_page: 25, sort: 'name', order: 'asc', search: '' });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim(), 250);
  const [more, setMore] = useState(false);
  const query = { ...params, search: term.length >= 2 ? term : '' };
  const list = useQuery(desktopsQuery(query));
  const cats = useQuery({ ...categoriesQuery(), enabled: isAdmin, meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery('', (params.category as string) ?? null), meta: HANDLES_ERROR });
  const templates = useQuery({ ...templatesQuery({ page: 1, per_page: 500, sort: 'name', order: 'asc', search: '' }), enabled: more, meta: HANDLES_ERROR });
  // Admins only (managers see no hypervisor): the filter lists the real hosts by name.
  const hosts = useQuery({ ...hypervisorsQuery, enabled: more && isAdmin });
  const deployments = useQuery({ ...deploymentsQuery({ page: 1, per_page: 500, sort: 'name', order: 'asc', search: '' }), enabled: more, meta: HANDLES_ERROR });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirm, setConfirm] = useState<{ action: TAdminDesktopAction; rows: TAdminDesktop[] } | null>(null);
  const [support, setSupport] = useState<TAdminDesktop | null>(null);
  const [busy, setBusy] = useState(false);
  const columnDefs = useMemo<ColumnDef<Column>[]>(
    () => [
      { key: 'name', label: t('admin_desktops.desktops.name'), shown: true, fixed: true, width: 200 },
      { key: 'owner', label: t('admin_desktops.common.owner'), shown: true, width: 140 },
      { key: 'place', label: t(isAdmin ? 'admin_desktops.common.category' : 'admin_desktops.common.group'), shown: true, width: 130 },
      { key: 'status', label: t('admin_desktops.common.status'), shown: true, width: 120 },
      { key: 'uptime', label: t('admin_desktops.desktops.uptime'), shown: true, width: 100 },
      { key: 'hypervisor', label: t('admin_desktops.desktops.hypervisor'), shown: true, width: 120 },
      { key: 'memory', label: t('admin_desktops.desktops.memory'), shown: true, width: 90 },
      { key: 'vcpus', label: t('admin_desktops.desktops.vcpus'), shown: false, width: 70 },
      { key: 'disk', label: t('admin_desktops.desktops.disk'), shown: false, width: 90 },
      { key: 'accessed', label: t('admin_desktops.desktops.last_access'), shown: false, width: 150 },
    ],
    [t, isAdmin],
  );
  const cols = useColumns('admin-desktops', columnDefs);

  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const patch = (p: Partial<ListParams>) => {
    setParams((x) => ({ ...x, page: 1, ...p }));
    setSelected(new Set());
  };
  const onSort = (field: string) => patch({ sort: field, order: params.sort === field && params.order === 'asc' ? 'desc' : 'asc' });
  const allOnPage = items.length > 0 && items.every((d) => selected.has(d.id));
  const toggle = (id: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const togglePage = () => setSelected((s) => (allOnPage ? new Set([...s].filter((id) => !items.some((d) => d.id === id))) : new Set([...s, ...items.map((d) => d.id)])));
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  const actionLabel = (a: TAdminDesktopAction) => t(`admin_desktops.desktops.${a}`);
  const filtered = Boolean(query.search || ['state', 'category', 'group', 'owner', 'template', 'deployment', 'hypervisor', 'persistent'].some((k) => params[k]));

  /** Runs an action on the desktops and says what happened to each (done, or why not: the first refusal's reason). */
  async function run(action: TAdminDesktopAction, ids: string[]) {
    const answer: TAdminActionAnswer = await desktopAction(action, ids);
    await refreshContent();
    setSelected((s) => new Set([...s].filter((id) => !answer.results.some((r) => r.id === id && r.ok))));
    const refused = answer.results.find((r) => !r.ok);
    if (refused) {
      const reason = codeText(refused.description_code ?? 'generic_error', refused.params);
      notifyRefusal(t('admin_desktops.desktops.result_partial', { action: actionLabel(action), done: answer.done, failed: answer.failed, reason }));
    } else {
      notifySuccess(t('admin_desktops.desktops.result_done', { action: actionLabel(action), count: answer.done }));
    }
  }
  const ask = (action: TAdminDesktopAction, rows: TAdminDesktop[]) => {
    if (CONFIRMED.includes(action)) return setConfirm({ action, rows });
    setBusy(true);
    run(action, rows.map((r) => r.id))
      .catch(handleError)
      .finally(() => setBusy(false));
  };
  const chosen = items.filter((d) => selected.has(d.id));
  // A click on a row opens its page, unless it was on one of the row's own controls (its box, its menu, its link).
  const openRow = (e: MouseEvent, id: string) => {
    if ((e.target as HTMLElement).closest('a, button, input, label, [role="menu"], [role="menuitem"]')) return;
    void navigate(`/isard-admin/desktops/${encodeURIComponent(id)}`);
  };

  return (
    <Stack gap="md">
      <PageHeader title={t('admin_nav.desktops')} subtitle={t('admin_desktops.desktops.subtitle')} />
      <Paper withBorder radius="lg" p="md">
        <Stack gap="sm">
          <Group gap="sm" align="flex-end" wrap="wrap">
            <TextInput
              leftSection={<IconSearch size={16} />}
              placeholder={t('admin_desktops.common.search')}
              aria-label={t('admin_desktops.common.search')}
              value={search}
              onChange={(e) => {
                setSearch(e.currentTarget.value);
                setParams((x) => ({ ...x, page: 1 }));
              }}
              style={{ flex: '2 1 260px' }}
              data-testid="desktops-search"
            />
            <Select
              placeholder={t('admin_desktops.common.status')}
              aria-label={t('admin_desktops.common.status')}
              data={DOMAIN_STATUSES.filter((s) => s !== 'CreatingAndStarting').map((s) => ({ value: s, label: t(`admin_desktops.desktops.state.${s}`) }))}
              value={(params.state as string) ?? null}
              onChange={(v) => patch({ state: v })}
              clearable
              style={{ flex: '1 1 150px' }}
              data-testid="desktops-filter-state"
            />
            {isAdmin && (
              <Select
                placeholder={t('admin_desktops.common.category')}
                aria-label={t('admin_desktops.common.category')}
                data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
                value={(params.category as string) ?? null}
                onChange={(v) => patch({ category: v, group: null })}
                clearable
                searchable
                style={{ flex: '1 1 150px' }}
                data-testid="desktops-filter-category"
              />
            )}
            <Select
              placeholder={t('admin_desktops.desktops.type')}
              aria-label={t('admin_desktops.desktops.type')}
              data={[{ value: 'true', label: t('admin_desktops.desktops.persistent') }, { value: 'false', label: t('admin_desktops.desktops.temporary') }]}
              value={(params.persistent as string) ?? null}
              onChange={(v) => patch({ persistent: v })}
              clearable
              style={{ flex: '1 1 130px' }}
              data-testid="desktops-filter-type"
            />
            <Button
              variant="subtle"
              leftSection={<IconAdjustmentsHorizontal size={16} />}
              onClick={() => setMore((m) => !m)}
              aria-expanded={more}
              data-testid="desktops-more-filters"
            >
              {t(more ? 'admin_desktops.common.fewer_filters' : 'admin_desktops.common.more_filters')}
            </Button>
            {/* Cards at phone width show every fact: the choice of columns is the table's. */}
            {!phone && <ColumnsMenu state={cols} testPrefix="desktops" />}
          </Group>
          <Collapse expanded={more}>
            <Group gap="sm" align="flex-end" wrap="wrap">
              <Select
                placeholder={t('admin_desktops.common.group')}
                aria-label={t('admin_desktops.common.group')}
                data={(groups.data?.items ?? []).map((g) => ({ value: g.id, label: isAdmin && !params.category ? `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` : builtInText(t, g.name) }))}
                value={(params.group as string) ?? null}
                onChange={(v) => patch({ group: v })}
                clearable
                searchable
                style={{ flex: '1 1 180px' }}
                data-testid="desktops-filter-group"
              />
              <div style={{ flex: '1 1 220px' }}>
                <UserPicker label="" placeholder={t('admin_desktops.common.owner')} value={(params.owner as string) ?? null} onChange={(v) => patch({ owner: v })} testId="desktops-filter-owner" />
              </div>
              <Select
                placeholder={t('admin_desktops.desktops.template')}
                aria-label={t('admin_desktops.desktops.template')}
                data={(templates.data?.items ?? []).map((x) => ({ value: x.id, label: `${x.name} · ${x.username}` }))}
                value={(params.template as string) ?? null}
                onChange={(v) => patch({ template: v })}
                clearable
                searchable
                style={{ flex: '1 1 180px' }}
                data-testid="desktops-filter-template"
              />
              <Select
                placeholder={t('admin_desktops.desktops.deployment')}
                aria-label={t('admin_desktops.desktops.deployment')}
                data={(deployments.data?.items ?? []).map((x) => ({ value: x.id, label: `${x.name} · ${x.username}` }))}
                value={(params.deployment as string) ?? null}
                onChange={(v) => patch({ deployment: v })}
                clearable
                searchable
                style={{ flex: '1 1 180px' }}
                data-testid="desktops-filter-deployment"
              />
              {isAdmin && (
                <Select
                  placeholder={t('admin_desktops.desktops.hypervisor')}
                  aria-label={t('admin_desktops.desktops.hypervisor')}
                  data={(hosts.data?.items ?? []).map((h) => ({ value: h.id, label: builtInText(t, h.name) }))}
                  value={(params.hypervisor as string) ?? null}
                  onChange={(v) => patch({ hypervisor: v })}
                  clearable
                  searchable
                  style={{ flex: '1 1 140px' }}
                  data-testid="desktops-filter-hypervisor"
                />
              )}
            </Group>
          </Collapse>
        </Stack>
      </Paper>

      {selected.size > 0 && (
        <BulkBar testId="desktops" label={t('admin_desktops.common.selected', { count: selected.size })}>
          <Button size="xs" variant="default" leftSection={<IconPlayerPlay size={14} />} loading={busy} onClick={() => ask('start', chosen)} data-testid="desktops-bulk-start">
            {t('admin_desktops.desktops.start')}
          </Button>
          <Button size="xs" variant="default" leftSection={<IconPlayerStop size={14} />} loading={busy} onClick={() => ask('stop', chosen)} data-testid="desktops-bulk-stop">
            {t('admin_desktops.desktops.stop')}
          </Button>
          <Button size="xs" variant="default" color="orange" leftSection={<IconPower size={14} />} onClick={() => ask('force_stop', chosen)} data-testid="desktops-bulk-force_stop">
            {t('admin_desktops.desktops.force_stop')}
          </Button>
          <Button size="xs" variant="default" leftSection={<IconRefresh size={14} />} onClick={() => ask('reset', chosen)} data-testid="desktops-bulk-reset">
            {t('admin_desktops.desktops.reset')}
          </Button>
          <Button size="xs" color="red" variant="light" leftSection={<IconTrash size={14} />} onClick={() => ask('delete', chosen)} data-testid="desktops-bulk-delete">
            {t('admin_desktops.desktops.delete')}
          </Button>
          <Button size="xs" color="red" variant="subtle" leftSection={<IconTrashX size={14} />} onClick={() => ask('delete_permanent', chosen)} data-testid="desktops-bulk-delete_permanent">
            {t('admin_desktops.desktops.delete_permanent')}
          </Button>
        </BulkBar>
      )}

      {list.isPending ? (
        <Stack gap="xs" data-testid="desktops-loading">
          {[0, 1, 2, 3].map((i) => (
            <Skeleton key={i} h={40} radius="md" />
          ))}
        </Stack>
      ) : list.isError && !list.data ? (
        <EmptyState
          icon={<IconDeviceDesktop size={28} />}
          title={t('admin_desktops.common.load_failed')}
          action={
            <Button variant="light" onClick={() => void list.refetch()} data-testid="desktops-retry">
              {t('admin_desktops.common.retry')}
            </Button>
          }
        />
      ) : items.length === 0 ? (
        <EmptyState
          icon={<IconDeviceDesktop size={28} />}
          title={t(filtered ? 'admin_desktops.desktops.none_found' : 'admin_desktops.desktops.empty')}
          body={t(filtered ? 'admin_desktops.desktops.none_found_body' : 'admin_desktops.desktops.empty_body')}
        />
      ) : phone ? (
        <Stack gap="xs" data-testid="desktops-cards" data-total={total}>
          <Checkbox
            ml="sm"
            label={t('admin_desktops.common.select_page')}
            checked={allOnPage}
            indeterminate={!allOnPage && items.some((d) => selected.has(d.id))}
            onChange={togglePage}
            data-testid="desktops-select-page"
          />
          {items.map((d) => (
            <DesktopCard key={d.id} d={d} now={now} selected={selected.has(d.id)} onToggle={() => toggle(d.id)} ask={ask} onSupport={setSupport} isAdmin={isAdmin} />
          ))}
        </Stack>
      ) : (
        <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
          <Table.ScrollContainer minWidth={FIXED_WIDTH + cols.width}>
            <Table highlightOnHover verticalSpacing="xs" data-testid="desktops-table" data-total={total}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th w={40}>
                    <Checkbox
                      aria-label={t('admin_desktops.common.select_page')}
                      checked={allOnPage}
                      indeterminate={!allOnPage && items.some((d) => selected.has(d.id))}
                      onChange={togglePage}
                      data-testid="desktops-select-page"
                    />
                  </Table.Th>
                  <SortHeader testPrefix="desktops" label={t('admin_desktops.desktops.name')} field="name" sort={params.sort} order={params.order} onSort={onSort} />
                  {cols.has('owner') && <SortHeader testPrefix="desktops" label={t('admin_desktops.common.owner')} field="owner" sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('place') && <SortHeader testPrefix="desktops" label={t(isAdmin ? 'admin_desktops.common.category' : 'admin_desktops.common.group')} field={isAdmin ? 'category' : 'group'} sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('status') && <SortHeader testPrefix="desktops" label={t('admin_desktops.common.status')} field="status" sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('uptime') && <SortHeader testPrefix="desktops" label={t('admin_desktops.desktops.uptime')} field="started" sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('hypervisor') && <Table.Th>{t('admin_desktops.desktops.hypervisor')}</Table.Th>}
                  {cols.has('memory') && <SortHeader testPrefix="desktops" label={t('admin_desktops.desktops.memory')} field="memory" sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('vcpus') && <SortHeader testPrefix="desktops" label={t('admin_desktops.desktops.vcpus')} field="vcpus" sort={params.sort} order={params.order} onSort={onSort} />}
                  {cols.has('disk') && <Table.Th>{t('admin_desktops.desktops.disk')}</Table.Th>}
                  {cols.has('accessed') && <SortHeader testPrefix="desktops" label={t('admin_desktops.desktops.last_access')} field="accessed" sort={params.sort} order={params.order} onSort={onSort} />}
                  <Table.Th w={48} style={STICKY} />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {items.map((d) => {
                  return (
                    <Table.Tr
                      key={d.id}
                      data-testid="desktop-row"
                      data-name={d.name}
                      data-owner={d.username}
                      data-status={d.status}
                      bg={selected.has(d.id) ? 'var(--mantine-color-indigo-light)' : undefined}
                      style={{ cursor: 'pointer' }}
                      onClick={(e) => openRow(e, d.id)}
                    >
                      <Table.Td>
                        <Checkbox aria-label={t('admin_desktops.common.select', { name: builtInText(t, d.name) })} checked={selected.has(d.id)} onChange={() => toggle(d.id)} data-testid="desktop-select" />
                      </Table.Td>
                      <Table.Td maw={260}>
                        <Group gap={6} wrap="nowrap">
                          <DesktopLink d={d} />
                          {!d.persistent && (
                            <Badge size="xs" variant="outline" color="gray" radius="sm" style={{ flexShrink: 0 }}>
                              {t('admin_desktops.desktops.temporary')}
                            </Badge>
                          )}
                        </Group>
                        <Text size="xs" c="dimmed" truncate="end">
                          {d.deployment_name
                            ? t('admin_desktops.desktops.in_deployment', { name: d.deployment_name })
                            : d.template_name
                              ? t('admin_desktops.desktops.from_template', { name: builtInText(t, d.template_name) })
                              : builtInText(t, d.description)}
                        </Text>
                      </Table.Td>
                      {cols.has('owner') && (
                        <Table.Td>
                          <OwnerCell row={d} />
                        </Table.Td>
                      )}
                      {cols.has('place') && (
                        <Table.Td>
                          <Text size="sm">{builtInText(t, isAdmin ? d.category_name : d.group_name)}</Text>
                          {isAdmin && (
                            <Text size="xs" c="dimmed">
                              {builtInText(t, d.group_name)}
                            </Text>
                          )}
                        </Table.Td>
                      )}
                      {cols.has('status') && (
                        <Table.Td>
                          <StateBadge status={d.status} size="sm" forceStopAt={d.force_stop_at} />
                          {d.guest_ip && (
                            <Text size="xs" c="dimmed" ff="monospace">
                              {d.guest_ip}
                            </Text>
                          )}
                        </Table.Td>
                      )}
                      {cols.has('uptime') && (
                        <Table.Td>
                          <Uptime started={d.started} now={now} />
                        </Table.Td>
                      )}
                      {cols.has('hypervisor') && (
                        <Table.Td>
                          <Text size="sm" c={d.hypervisor ? undefined : 'dimmed'}>
                            {builtInText(t, d.hypervisor) ?? t('admin_desktops.desktops.not_running')}
                          </Text>
                        </Table.Td>
                      )}
                      {cols.has('memory') && (
                        <Table.Td>
                          <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                            {formatBytes(d.memory_mb * 1024 * 1024, i18n.language)}
                          </Text>
                        </Table.Td>
                      )}
                      {cols.has('vcpus') && (
                        <Table.Td>
                          <Text size="sm">{d.vcpus}</Text>
                        </Table.Td>
                      )}
                      {cols.has('disk') && (
                        <Table.Td>
                          <Tooltip label={formatBytes(d.disk_used, i18n.language)}>
                            <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                              {formatBytes(d.disk_size, i18n.language)}
                            </Text>
                          </Tooltip>
                        </Table.Td>
                      )}
                      {cols.has('accessed') && (
                        <Table.Td>
                          <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                            {d.accessed ? dateFmt.format(new Date(d.accessed)) : t('admin_desktops.desktops.never')}
                          </Text>
                        </Table.Td>
                      )}
                      <Table.Td style={STICKY}>
                        <DesktopMenu d={d} ask={ask} onSupport={setSupport} />
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Paper>
      )}
      <ListFooter
        testPrefix="desktops"
        total={total}
        page={params.page}
        perPage={params.per_page}
        onPage={(page) => setParams((x) => ({ ...x, page }))}
        onPerPage={(n) => patch({ per_page: n })}
        totalLabel={t('admin_desktops.common.total', { count: total })}
        perPageLabel={t('admin_desktops.common.per_page')}
      />

      <ConfirmModal
        opened={confirm !== null}
        onClose={() => setConfirm(null)}
        title={confirm ? t(`admin_desktops.desktops.confirm_${confirm.action}_title`, { count: confirm.rows.length }) : ''}
        confirmLabel={confirm ? actionLabel(confirm.action) : ''}
        color={confirm?.action === 'force_stop' || confirm?.action === 'reset' ? 'orange' : 'red'}
        testId="desktops-confirm"
        onConfirm={async () => {
          if (confirm) await run(confirm.action, confirm.rows.map((r) => r.id));
        }}
      >
        <Text size="sm">{confirm ? t(`admin_desktops.desktops.confirm_${confirm.action}_body`) : ''}</Text>
        <Text size="sm" fw={600} data-testid="desktops-confirm-names">
          {confirm?.rows.slice(0, 5).map((r) => `${r.name} (${r.username})`).join(', ')}
          {confirm && confirm.rows.length > 5 ? '…' : ''}
        </Text>
      </ConfirmModal>

      <ConfirmModal
        opened={support !== null}
        onClose={() => setSupport(null)}
        title={support ? t('admin_desktops.desktops.support_title', { name: builtInText(t, support.name) }) : ''}
        confirmLabel={t('admin_desktops.desktops.support_open')}
        color="indigo"
        testId="desktops-support"
        onConfirm={async () => {
          if (support) await openViewer('browser-vnc', () => supportViewer(support.id, 'browser-vnc'));
        }}
      >
        <Text size="sm">{support ? t('admin_desktops.desktops.support_body', { owner: support.user_name }) : ''}</Text>
      </ConfirmModal>
    </Stack>
  );
}

/** A refusal of some of the desktops, as a notice that stays a little longer. */
function notifyRefusal(message: string) {
  notifications.show({ message, color: 'orange', autoClose: 8000, 'data-testid': 'desktops-refusal' } as Parameters<typeof notifications.show>[0]);
}
