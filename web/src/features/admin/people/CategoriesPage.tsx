import { useState, useLayoutEffect } from 'react';
import { Badge, Button, Code, Divider, Group, NumberInput, SimpleGrid, Stack, Switch, Table, TagsInput, Text, Textarea, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconBuilding, IconEdit, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminCategory, TLimits, TQuota } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { categoriesQuery, createCategory, deleteCategory, refreshPeople, updateCategory } from './api';
import { QuotaEditor } from './QuotaEditor';
import { ConfirmDelete, fullBadge, RowAction, FormModal, ListTable } from '../shared/console';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';

type Draft = {
  name: string; description: string; custom_url_name: string; frontend: boolean; allowed_email_domains: string[]; maintenance: boolean;
  recycle_bin_cutoff_hours: number | null; quota: TQuota | null; limits: TLimits | null;
};
const EMPTY: Draft = { name: '', description: '', custom_url_name: '', frontend: true, allowed_email_domains: [], maintenance: false, recycle_bin_cutoff_hours: null, quota: null, limits: null };
/** A login address from a name: lower case, dashes. */
const slug = (s: string) => s.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
export const loginAddress = (custom: string) => `${window.location.origin}/login/form/${custom}`;

function CategoryForm({ opened, onClose, category }: { opened: boolean; onClose: () => void; category: TAdminCategory | null }) {
  const { t } = useTranslation();
  const [d, setD] = useState<Draft>(EMPTY);
  const [urlTouched, setUrlTouched] = useState(false);
  const { busy, error, setError, run } = useAction();
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setUrlTouched(Boolean(category));
    setD(category ? { ...category } : EMPTY);
  }, [opened, category, setError]);
  const save = () =>
    run(async () => {
      const body = { ...d, name: d.name.trim(), custom_url_name: d.custom_url_name.trim() };
      if (category) await updateCategory(category.id, body);
      else await createCategory(body);
      await refreshPeople();
      notifySuccess(t('admin.common.saved'));
      onClose();
    });
  return (
    <FormModal opened={opened} onClose={onClose} title={t(category ? 'admin.categories.edit_title' : 'admin.categories.new_title')} size="lg" onSubmit={save} busy={busy} error={error} testId="category-form">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <TextInput
          label={t('admin.categories.name')}
          value={d.name}
          onChange={(e) => {
            const name = e.currentTarget.value;
            setD((x) => ({ ...x, name, custom_url_name: urlTouched ? x.custom_url_name : slug(name) }));
          }}
          required
          maxLength={128}
          data-testid="category-form-name"
        />
        <TextInput
          label={t('admin.categories.custom_url')}
          description={d.custom_url_name ? loginAddress(d.custom_url_name) : t('admin.categories.custom_url_hint')}
          value={d.custom_url_name}
          onChange={(e) => {
            setUrlTouched(true);
            setD({ ...d, custom_url_name: e.currentTarget.value });
          }}
          required
          maxLength={64}
          data-testid="category-form-url"
        />
      </SimpleGrid>
      <Textarea label={t('admin.categories.description')} value={d.description} onChange={(e) => setD({ ...d, description: e.currentTarget.value })} autosize minRows={2} maxLength={1000} />
      <TagsInput
        label={t('admin.categories.domains')}
        description={t('admin.categories.domains_hint')}
        value={d.allowed_email_domains}
        onChange={(v) => setD({ ...d, allowed_email_domains: v })}
        placeholder="school.example.org"
        clearable
        data-testid="category-form-domains"
      />
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <NumberInput
          label={t('admin.categories.retention')}
          description={t('admin.categories.retention_hint')}
          value={d.recycle_bin_cutoff_hours ?? ''}
          onChange={(v) => setD({ ...d, recycle_bin_cutoff_hours: v === '' ? null : Number(v) })}
          min={0}
          max={100000}
          data-testid="category-form-retention"
        />
        <Stack gap="xs" mt="sm">
          <Switch label={t('admin.categories.frontend')} checked={d.frontend} onChange={(e) => setD({ ...d, frontend: e.currentTarget.checked })} />
          <Switch label={t('admin.categories.maintenance')} color="orange" checked={d.maintenance} onChange={(e) => setD({ ...d, maintenance: e.currentTarget.checked })} data-testid="category-form-maintenance" />
        </Stack>
      </SimpleGrid>
      <Divider label={t('admin.quota.title')} labelPosition="left" />
      <QuotaEditor kind="quota" value={d.quota} onChange={(quota) => setD({ ...d, quota })} testId="category-form-quota" />
      <Divider label={t('admin.quota.limits_title')} labelPosition="left" />
      <QuotaEditor kind="limits" value={d.limits} onChange={(limits) => setD({ ...d, limits })} testId="category-form-limits" />
    </FormModal>
  );
}

/** /isard-admin/categories (admins): organisations with their login address, domains, maintenance, retention, quota and limits. */
export default function CategoriesPage() {
  const { t } = useTranslation();
  const list = useQuery(categoriesQuery());
  const [editing, setEditing] = useState<TAdminCategory | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<TAdminCategory | null>(null);
  const items = list.data?.items ?? [];
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin.nav.categories')}
        subtitle={t('admin.categories.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="categories-new">
            {t('admin.categories.new')}
          </Button>
        }
      />
      <ListTable
        pending={list.isPending}
        empty={items.length === 0 && (
          <EmptyState icon={<IconBuilding size={28} />} title={t('admin.categories.empty')} />
        )}
        minWidth={820}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="categories-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin.categories.name')}</Table.Th>
            <Table.Th>{t('admin.categories.custom_url')}</Table.Th>
            <Table.Th>{t('admin.categories.domains')}</Table.Th>
            <Table.Th>{t('admin.categories.people')}</Table.Th>
            <Table.Th>{t('admin.categories.state')}</Table.Th>
            <Table.Th w={90} />
          </Table.Tr>
        }
      >
        {items.map((c) => (
          <Table.Tr key={c.id} data-testid="category-row" data-name={c.name}>
            <Table.Td>
              <Text size="sm" fw={600}>
                {builtInText(t, c.name)}
              </Text>
              {c.description && (
                <Text size="xs" c="dimmed" lineClamp={1}>
                  {builtInText(t, c.description)}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Code>/login/form/{c.custom_url_name}</Code>
            </Table.Td>
            <Table.Td>
              <Text size="xs">{c.allowed_email_domains.length ? c.allowed_email_domains.join(', ') : t('admin.categories.any_domain')}</Text>
            </Table.Td>
            <Table.Td>
              <Text size="xs">{t('admin.categories.counts', { users: c.users, groups: c.groups })}</Text>
            </Table.Td>
            <Table.Td>
              {c.maintenance ? (
                <Badge styles={fullBadge} color="orange" variant="light">
                  {t('admin.categories.in_maintenance')}
                </Badge>
              ) : (
                <Badge styles={fullBadge} color="teal" variant="light">
                  {t('admin.categories.open')}
                </Badge>
              )}
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <RowAction label={t('admin.common.edit')} icon={<IconEdit size={16} />} onClick={() => setEditing(c)} testId="category-edit" />
                <RowAction label={t('admin.common.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(c)} testId="category-delete" />
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <CategoryForm opened={editing !== undefined} onClose={() => setEditing(undefined)} category={editing ?? null} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin.categories.delete_title')}
        body={t('admin.categories.delete_body', { name: builtInText(t, deleting?.name ?? '') })}
        confirmLabel={t('admin.common.delete')}
        testId="category-delete"
        onConfirm={async () => {
          await deleteCategory(deleting!.id);
          await refreshPeople();
        }}
      />
    </Stack>
  );
}
