import { useMemo, useState } from 'react';
import {
  ActionIcon, Badge, Button, Checkbox, Group, Menu, Pagination, Paper, Select, Skeleton, Stack, Table, Text, TextInput,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import {
  IconDots, IconDownload, IconEdit, IconFileImport, IconKey, IconListCheck, IconPlus, IconSearch, IconTrash,
  IconMailForward, IconShieldCheck, IconShieldOff, IconUserCheck, IconUserOff, IconUsers, IconUsersGroup,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ROLES, type TAdminUser } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { modals } from '../../../lib/modals';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { downloadText } from '../../../lib/download';
import { bulkUsers, deleteUser, exportUsers, matchingUserIds, refreshPeople, resetTwoFactor, sendResetMail, usersQuery, type UserListParams, categoriesQuery, groupsQuery } from './api';
import { PasswordResetModal } from './PasswordResetModal';
import { ImportModal } from './ImportModal';
import { UserForm } from './UserForm';
import { ConfirmDelete, fullBadge, ListTable, BulkBar } from '../shared/console';
import { SortHeader } from '../shared/desktops-list';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';

const PER_PAGE = ['25', '50', '100'];

/** /isard-admin/users: every user the caller reaches, paged, sorted and filtered by the server. */
export default function UsersPage() {
  const { t, i18n } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const [params, setParams] = useState<UserListParams>({ page: 1, per_page: 25, sort: 'username', order: 'asc', search: '' });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 250);
  const query = { ...params, search: term.trim().length >= 2 ? term.trim() : '' };
  const list = useQuery(usersQuery(query));
  const cats = useQuery({ ...categoriesQuery(), enabled: isAdmin, meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery('', params.category), meta: HANDLES_ERROR });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [editing, setEditing] = useState<TAdminUser | null | undefined>(undefined);
  const [importing, setImporting] = useState(false);
  const [deleting, setDeleting] = useState<TAdminUser[] | null>(null);
  const [moveTo, setMoveTo] = useState<string | null>(null);
  const [bulkBusy, setBulkBusy] = useState(false);
  const [resetting, setResetting] = useState<string[] | null>(null);
  const [selectingAll, setSelectingAll] = useState(false);

  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / params.per_page));
  const patch = (p: Partial<UserListParams>) => {
    setParams((x) => ({ ...x, page: 1, ...p }));
    setSelected(new Set());
  };
  const onSort = (field: string) => patch({ sort: field, order: params.sort === field && params.order === 'asc' ? 'desc' : 'asc' });
  const allOnPage = items.length > 0 && items.every((u) => selected.has(u.id));
  const toggle = (id: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const groupOptions = (groups.data?.items ?? []).map((g) => ({ value: g.id, label: isAdmin && !params.category ? `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` : builtInText(t, g.name) }));
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);

  const bulk = async (action: 'enable' | 'disable' | 'change_group', group?: string) => {
    setBulkBusy(true);
    try {
      const answer = await bulkUsers({ ids: [...selected], action, group });
      await refreshPeople();
      setSelected(new Set());
      setMoveTo(null);
      notifySuccess(answer.failed.length ? t('admin.users.bulk_partial', { done: answer.done, failed: answer.failed.length }) : t('admin.users.bulk_done', { count: answer.done }));
    } catch (err) {
      handleError(err);
    } finally {
      setBulkBusy(false);
    }
  };
  /** Every user the filters match (a whole group when one is chosen), on every page. */
  const selectAllMatching = async () => {
    setSelectingAll(true);
    try {
      setSelected(new Set(await matchingUserIds({ ...query })));
    } catch (err) {
      handleError(err);
    } finally {
      setSelectingAll(false);
    }
  };
  const doExport = async () => {
    try {
      downloadText(await exportUsers(query), 'text/csv', 'users.csv');
    } catch (err) {
      handleError(err);
    }
  };
  const confirmTwoFactorReset = (u: TAdminUser) =>
    modals.openConfirmModal({
      title: t('admin.users.two_factor_reset_title'),
      centered: true,
      children: <Text size="sm">{t('admin.users.two_factor_reset_body', { name: u.username })}</Text>,
      labels: { confirm: t('admin.users.two_factor_reset'), cancel: t('common.cancel') },
      confirmProps: { color: 'red', 'data-testid': 'confirm-two-factor-reset' },
      onConfirm: async () => {
        try {
          await resetTwoFactor(u.id);
          await refreshPeople();
          notifySuccess(t('admin.users.two_factor_reset_done', { name: u.username }));
        } catch (err) {
          handleError(err);
        }
      },
    });
  const filtered = Boolean(query.search || params.category || params.group || params.role || params.active);

  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin.nav.users')}
        subtitle={t('admin.users.subtitle')}
        actions={
          <>
            <Button variant="default" leftSection={<IconDownload size={16} />} onClick={() => void doExport()} data-testid="users-export">
              {t('admin.users.export')}
            </Button>
            <Button variant="light" leftSection={<IconFileImport size={16} />} onClick={() => setImporting(true)} data-testid="users-import">
              {t('admin.users.import')}
            </Button>
            <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="users-new">
              {t('admin.users.new')}
            </Button>
          </>
        }
      />
      <Paper withBorder radius="lg" p="md">
        <Group gap="sm" align="flex-end" wrap="wrap">
          <TextInput
            leftSection={<IconSearch size={16} />}
            placeholder={t('admin.users.search')}
            aria-label={t('admin.users.search')}
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              setParams((x) => ({ ...x, page: 1 }));
            }}
            style={{ flex: '1 1 220px' }}
            data-testid="users-search"
          />
          {isAdmin && (
            <Select
              placeholder={t('admin.users.category')}
              aria-label={t('admin.users.category')}
              data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
              value={params.category ?? null}
              onChange={(v) => patch({ category: v, group: null })}
              clearable
              searchable
              style={{ flex: '1 1 150px' }}
              data-testid="users-filter-category"
            />
          )}
          <Select placeholder={t('admin.users.group')} aria-label={t('admin.users.group')} data={groupOptions} value={params.group ?? null} onChange={(v) => patch({ group: v })} clearable searchable style={{ flex: '1 1 160px' }} data-testid="users-filter-group" />
          <Select placeholder={t('admin.users.role')} aria-label={t('admin.users.role')} data={ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }))} value={params.role ?? null} onChange={(v) => patch({ role: v })} clearable style={{ flex: '1 1 120px' }} data-testid="users-filter-role" />
          <Select
            placeholder={t('admin.users.status')}
            aria-label={t('admin.users.status')}
            data={[{ value: 'true', label: t('admin.users.enabled') }, { value: 'false', label: t('admin.users.disabled') }]}
            value={params.active ?? null}
            onChange={(v) => patch({ active: v })}
            clearable
            style={{ flex: '1 1 120px' }}
            data-testid="users-filter-active"
          />
        </Group>
      </Paper>

      {params.group && total > 0 && selected.size < total && (
        <Group gap="xs">
          <Button
            size="xs"
            variant="light"
            leftSection={<IconListCheck size={14} />}
            loading={selectingAll}
            onClick={() => void selectAllMatching()}
            data-testid="users-select-group"
          >
            {t('admin.users.select_group', { count: total, group: groupOptions.find((g) => g.value === params.group)?.label ?? '' })}
          </Button>
        </Group>
      )}
      {selected.size > 0 && (
        <BulkBar testId="users" label={t('admin.users.selected', { count: selected.size })}>
          <Button size="xs" variant="light" color="orange" leftSection={<IconKey size={14} />} onClick={() => setResetting([...selected])} data-testid="users-bulk-reset-passwords">
            {t('admin.users.accounts.action')}
          </Button>
          <Button size="xs" variant="default" leftSection={<IconUserCheck size={14} />} loading={bulkBusy} onClick={() => void bulk('enable')} data-testid="users-bulk-enable">
            {t('admin.users.enable')}
          </Button>
          <Button size="xs" variant="default" leftSection={<IconUserOff size={14} />} loading={bulkBusy} onClick={() => void bulk('disable')} data-testid="users-bulk-disable">
            {t('admin.users.disable')}
          </Button>
          <Group gap={4} wrap="nowrap">
            <Select size="xs" placeholder={t('admin.users.move_to')} data={groupOptions} value={moveTo} onChange={setMoveTo} searchable w={180} data-testid="users-bulk-group" />
            <Button size="xs" variant="default" leftSection={<IconUsersGroup size={14} />} disabled={!moveTo} loading={bulkBusy} onClick={() => moveTo && void bulk('change_group', moveTo)} data-testid="users-bulk-move">
              {t('admin.users.change_group')}
            </Button>
          </Group>
          <Button size="xs" color="red" variant="light" leftSection={<IconTrash size={14} />} onClick={() => setDeleting(items.filter((u) => selected.has(u.id)))} data-testid="users-bulk-delete">
            {t('admin.users.delete')}
          </Button>
        </BulkBar>
      )}

      <ListTable
        pending={list.isPending}
        loading={
          <Stack gap="xs" data-testid="users-loading">
            {[0, 1, 2, 3].map((i) => (
              <Skeleton key={i} h={36} radius="md" />
            ))}
          </Stack>
        }
        empty={items.length === 0 && (
          <EmptyState
            icon={<IconUsers size={28} />}
            title={t(filtered ? 'admin.users.none_found' : 'admin.users.empty')}
            body={t(filtered ? 'admin.users.none_found_body' : 'admin.users.empty_body')}
          />
        )}
        minWidth={900}
        highlightOnHover
        verticalSpacing="xs"
        data-testid="users-table"
        data-total={total}
        head={
          <Table.Tr>
            <Table.Th w={40}>
              <Checkbox
                aria-label={t('admin.users.select_page')}
                checked={allOnPage}
                indeterminate={!allOnPage && items.some((u) => selected.has(u.id))}
                onChange={() => setSelected((s) => (allOnPage ? new Set([...s].filter((id) => !items.some((u) => u.id === id))) : new Set([...s, ...items.map((u) => u.id)])))}
                data-testid="users-select-page"
              />
            </Table.Th>
            <SortHeader testPrefix="users" label={t('admin.users.username')} field="username" sort={params.sort} order={params.order} onSort={onSort} />
            <SortHeader testPrefix="users" label={t('admin.users.name')} field="name" sort={params.sort} order={params.order} onSort={onSort} />
            <SortHeader testPrefix="users" label={t('admin.users.role')} field="role" sort={params.sort} order={params.order} onSort={onSort} />
            <SortHeader testPrefix="users" label={t('admin.users.group')} field="group" sort={params.sort} order={params.order} onSort={onSort} />
            {isAdmin && <SortHeader testPrefix="users" label={t('admin.users.category')} field="category" sort={params.sort} order={params.order} onSort={onSort} />}
            <SortHeader testPrefix="users" label={t('admin.users.status')} field="active" sort={params.sort} order={params.order} onSort={onSort} />
            <SortHeader testPrefix="users" label={t('admin.users.accessed')} field="accessed" sort={params.sort} order={params.order} onSort={onSort} />
            <Table.Th w={48} />
          </Table.Tr>
        }
      >
        {items.map((u) => (
          <Table.Tr key={u.id} data-testid="user-row" data-username={u.username} bg={selected.has(u.id) ? 'var(--mantine-color-indigo-light)' : undefined}>
            <Table.Td>
              <Checkbox aria-label={t('admin.users.select', { name: u.username })} checked={selected.has(u.id)} onChange={() => toggle(u.id)} data-testid="user-select" />
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <Text size="sm" fw={600}>
                  {u.username}
                </Text>
                {u.two_factor && (
                  <Badge size="xs" variant="light" color="teal" leftSection={<IconShieldCheck size={10} />} title={t('admin.users.two_factor_on')} data-testid="user-two-factor">
                    {t('admin.users.two_factor_badge')}
                  </Badge>
                )}
              </Group>
              {u.email && (
                <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                  {u.email}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Text size="sm">{u.name}</Text>
            </Table.Td>
            <Table.Td>
              <Badge styles={fullBadge} variant="light" color={u.role === 'admin' ? 'grape' : u.role === 'manager' ? 'indigo' : u.role === 'advanced' ? 'cyan' : 'gray'} radius="sm">
                {t(`roles.${u.role}`)}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="sm">{builtInText(t, u.group_name)}</Text>
              {u.secondary_groups.length > 0 && (
                <Text size="xs" c="dimmed">
                  {t('admin.users.plus_groups', { count: u.secondary_groups.length })}
                </Text>
              )}
            </Table.Td>
            {isAdmin && (
              <Table.Td>
                <Text size="sm">{builtInText(t, u.category_name)}</Text>
              </Table.Td>
            )}
            <Table.Td>
              <Badge styles={fullBadge} variant="dot" color={u.active ? 'teal' : 'red'} data-testid="user-status" data-active={u.active}>
                {t(u.active ? 'admin.users.enabled' : 'admin.users.disabled')}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="xs" c="dimmed">
                {u.accessed ? dateFmt.format(new Date(u.accessed)) : t('admin.users.never')}
              </Text>
            </Table.Td>
            <Table.Td>
              <Menu position="bottom-end" withinPortal>
                <Menu.Target>
                  <ActionIcon variant="subtle" color="gray" aria-label={t('admin.users.actions', { name: u.username })} data-testid="user-actions">
                    <IconDots size={16} />
                  </ActionIcon>
                </Menu.Target>
                <Menu.Dropdown>
                  <Menu.Item leftSection={<IconEdit size={14} />} onClick={() => setEditing(u)} data-testid="user-edit">
                    {t('admin.common.edit')}
                  </Menu.Item>
                  <Menu.Item
                    leftSection={u.active ? <IconUserOff size={14} /> : <IconUserCheck size={14} />}
                    data-testid="user-toggle-active"
                    onClick={() => {
                      void bulkUsers({ ids: [u.id], action: u.active ? 'disable' : 'enable' })
                        .then(async (a) => {
                          await refreshPeople();
                          notifySuccess(t('admin.users.bulk_done', { count: a.done }));
                        })
                        .catch(handleError);
                    }}
                  >
                    {t(u.active ? 'admin.users.disable' : 'admin.users.enable')}
                  </Menu.Item>
                  {u.provider === 'local' && u.id !== me?.id && (
                    <Menu.Item leftSection={<IconKey size={14} />} onClick={() => setResetting([u.id])} data-testid="user-reset-password">
                      {t('admin.users.accounts.action_one')}
                    </Menu.Item>
                  )}
                  {u.email && (
                    <Menu.Item
                      leftSection={<IconMailForward size={14} />}
                      data-testid="user-reset-mail"
                      onClick={() => {
                        void sendResetMail(u.id)
                          .then(() => notifySuccess(t('admin.users.reset_mail_sent', { email: u.email })))
                          .catch(handleError);
                      }}
                    >
                      {t('admin.users.reset_mail')}
                    </Menu.Item>
                  )}
                  {u.two_factor && (
                    <Menu.Item leftSection={<IconShieldOff size={14} />} onClick={() => confirmTwoFactorReset(u)} data-testid="user-two-factor-reset">
                      {t('admin.users.two_factor_reset')}
                    </Menu.Item>
                  )}
                  <Menu.Divider />
                  <Menu.Item color="red" leftSection={<IconTrash size={14} />} onClick={() => setDeleting([u])} data-testid="user-delete">
                    {t('admin.users.delete')}
                  </Menu.Item>
                </Menu.Dropdown>
              </Menu>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      {total > 0 && (
        <Group justify="space-between" wrap="wrap">
          <Group gap="xs">
            <Text size="sm" c="dimmed" data-testid="users-total">
              {t('admin.common.total', { count: total })}
            </Text>
            <Select size="xs" w={80} data={PER_PAGE} value={String(params.per_page)} onChange={(v) => v && patch({ per_page: Number(v) })} aria-label={t('admin.common.per_page')} allowDeselect={false} />
          </Group>
          <Pagination total={pages} value={params.page} onChange={(page) => setParams((x) => ({ ...x, page }))} size="sm" data-testid="users-pages" />
        </Group>
      )}
      {editing !== undefined && me && (
        <UserForm opened onClose={() => setEditing(undefined)} user={editing} isAdmin={isAdmin} myCategory={me.category} />
      )}
      <ImportModal opened={importing} onClose={() => setImporting(false)} />
      <PasswordResetModal ids={resetting} onClose={() => setResetting(null)} onDone={() => setSelected(new Set())} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin.users.delete_title', { count: deleting?.length ?? 0 })}
        body={t('admin.users.delete_body', { count: deleting?.length ?? 0, name: deleting?.[0]?.username ?? '' })}
        confirmLabel={t('admin.users.delete')}
        testId="users-delete"
        onConfirm={async () => {
          if (!deleting) return;
          if (deleting.length === 1) await deleteUser(deleting[0]!.id);
          else await bulkUsers({ ids: deleting.map((u) => u.id), action: 'delete' });
          setSelected(new Set());
          await refreshPeople();
        }}
      />
    </Stack>
  );
}
