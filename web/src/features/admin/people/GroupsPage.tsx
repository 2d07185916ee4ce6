import { useState, useLayoutEffect } from 'react';
import { Badge, Button, Divider, Group, Select, Stack, Switch, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconEdit, IconPlus, IconSearch, IconTrash, IconUsersGroup } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminGroup, TLimits, TQuota } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { createGroup, deleteGroup, groupsQuery, refreshPeople, updateGroup, categoriesQuery } from './api';
import { QuotaEditor } from './QuotaEditor';
import { ConfirmDelete, fullBadge, RowAction, FormModal, ListTable } from '../shared/console';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';

type Draft = { name: string; description: string; category: string; quota: TQuota | null; limits: TLimits | null; openAtSignIn: boolean };

function GroupForm({ opened, onClose, group, isAdmin, myCategory }: { opened: boolean; onClose: () => void; group: TAdminGroup | null; isAdmin: boolean; myCategory: string }) {
  const { t } = useTranslation();
  const [d, setD] = useState<Draft>({ name: '', description: '', category: myCategory, quota: null, limits: null, openAtSignIn: false });
  const { busy, error, setError, run } = useAction();
  const cats = useQuery({ ...categoriesQuery(), enabled: opened && isAdmin && !group, meta: HANDLES_ERROR });
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setD(
      group
        ? { name: group.name, description: group.description, category: group.category, quota: group.quota, limits: group.limits, openAtSignIn: group.open_desktop_at_sign_in }
        : { name: '', description: '', category: myCategory, quota: null, limits: null, openAtSignIn: false },
    );
  }, [opened, group, myCategory, setError]);
  const save = () =>
    run(async () => {
      const fields = { name: d.name, description: d.description, quota: d.quota, limits: d.limits, open_desktop_at_sign_in: d.openAtSignIn };
      if (group) await updateGroup(group.id, fields);
      else await createGroup({ ...fields, category: isAdmin ? d.category : undefined });
      await refreshPeople();
      notifySuccess(t('admin.common.saved'));
      onClose();
    });
  return (
    <FormModal opened={opened} onClose={onClose} title={t(group ? 'admin.groups.edit_title' : 'admin.groups.new_title')} size="lg" onSubmit={save} busy={busy} error={error} testId="group-form">
      <TextInput label={t('admin.groups.name')} value={d.name} onChange={(e) => setD({ ...d, name: e.currentTarget.value })} required maxLength={128} data-testid="group-form-name" />
      {isAdmin && !group && (
        <Select
          label={t('admin.users.category')}
          data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
          value={d.category}
          onChange={(v) => v && setD({ ...d, category: v })}
          allowDeselect={false}
          searchable
          data-testid="group-form-category"
        />
      )}
      <Textarea label={t('admin.groups.description')} value={d.description} onChange={(e) => setD({ ...d, description: e.currentTarget.value })} autosize minRows={2} maxLength={1000} />
      <Switch
        label={t('admin.groups.open_at_sign_in')}
        description={t('admin.groups.open_at_sign_in_hint')}
        checked={d.openAtSignIn}
        onChange={(e) => setD({ ...d, openAtSignIn: e.currentTarget.checked })}
        data-testid="group-form-open-at-sign-in"
      />
      <Divider label={t('admin.quota.title')} labelPosition="left" />
      <QuotaEditor kind="quota" value={d.quota} onChange={(quota) => setD({ ...d, quota })} testId="group-form-quota" />
      <Divider label={t('admin.quota.limits_title')} labelPosition="left" />
      <QuotaEditor kind="limits" value={d.limits} onChange={(limits) => setD({ ...d, limits })} testId="group-form-limits" />
    </FormModal>
  );
}

/** /isard-admin/groups: groups with their member count, quota and limits. */
export default function GroupsPage() {
  const { t } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 250);
  const [page, setPage] = useState(1);
  const list = useQuery(groupsQuery(term.trim().length >= 2 ? term.trim() : '', undefined, page, 100));
  const [editing, setEditing] = useState<TAdminGroup | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<TAdminGroup | null>(null);
  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin.nav.groups')}
        subtitle={t('admin.groups.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="groups-new">
            {t('admin.groups.new')}
          </Button>
        }
      />
      <TextInput leftSection={<IconSearch size={16} />} placeholder={t('admin.groups.search')} aria-label={t('admin.groups.search')} value={search} onChange={(e) => { setSearch(e.currentTarget.value); setPage(1); }} maw={360} data-testid="groups-search" />
      <ListTable
        pending={list.isPending}
        empty={items.length === 0 && (
          <EmptyState icon={<IconUsersGroup size={28} />} title={t('admin.groups.empty')} body={t('admin.groups.empty_body')} />
        )}
        minWidth={720}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="groups-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin.groups.name')}</Table.Th>
            {isAdmin && <Table.Th>{t('admin.users.category')}</Table.Th>}
            <Table.Th>{t('admin.groups.users')}</Table.Th>
            <Table.Th>{t('admin.quota.title')}</Table.Th>
            <Table.Th>{t('admin.quota.limits_title')}</Table.Th>
            <Table.Th w={90} />
          </Table.Tr>
        }
      >
        {items.map((g) => (
          <Table.Tr key={g.id} data-testid="group-row" data-name={g.name}>
            <Table.Td>
              <Text size="sm" fw={600}>
                {builtInText(t, g.name)}
              </Text>
              {g.description && (
                <Text size="xs" c="dimmed" lineClamp={1}>
                  {builtInText(t, g.description)}
                </Text>
              )}
            </Table.Td>
            {isAdmin && <Table.Td>{builtInText(t, g.category_name)}</Table.Td>}
            <Table.Td data-testid="group-users">{g.users}</Table.Td>
            <Table.Td>
              <Badge styles={fullBadge} variant="light" color={g.quota ? 'indigo' : 'gray'}>
                {g.quota ? t('admin.quota.own') : t('admin.quota.inherited_short')}
              </Badge>
            </Table.Td>
            <Table.Td>
              {g.limits ? (
                <Badge styles={fullBadge} variant="light" color="orange">
                  {t('admin.quota.users_limit', { count: g.limits.users })}
                </Badge>
              ) : (
                <Badge styles={fullBadge} variant="light" color="gray">
                  {t('admin.quota.no_limits')}
                </Badge>
              )}
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <RowAction label={t('admin.common.edit')} icon={<IconEdit size={16} />} onClick={() => setEditing(g)} testId="group-edit" />
                <RowAction label={t('admin.common.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(g)} testId="group-delete" />
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      {total > 100 && (
        <Group justify="flex-end">
          <Button.Group>
            <Button variant="default" size="xs" disabled={page === 1} onClick={() => setPage(page - 1)}>
              ‹
            </Button>
            <Button variant="default" size="xs" disabled={page * 100 >= total} onClick={() => setPage(page + 1)}>
              ›
            </Button>
          </Button.Group>
        </Group>
      )}
      {me && <GroupForm opened={editing !== undefined} onClose={() => setEditing(undefined)} group={editing ?? null} isAdmin={isAdmin} myCategory={me.category} />}
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin.groups.delete_title')}
        body={t('admin.groups.delete_body', { name: builtInText(t, deleting?.name ?? '') })}
        confirmLabel={t('admin.common.delete')}
        testId="group-delete"
        onConfirm={async () => {
          await deleteGroup(deleting!.id);
          await refreshPeople();
        }}
      />
    </Stack>
  );
}
