import { useState, useLayoutEffect } from 'react';
import { Alert, Badge, Button, Group, MultiSelect, NumberInput, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertTriangle, IconCalendarCog, IconEdit, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ROLES, type TAllowed, type TBookingRule, NOT_SHARED } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { ConfirmDelete, fullBadge, RowAction, FormModal, ListTable } from '../shared/console';
import { bookingRulesQuery, createRule, deleteRule, refreshReserve, updateRule } from './api';
import '../../../i18n/areas/admin-reserve';
import { builtInText } from '../../../lib/built-in-text';
import { HANDLES_ERROR } from '../../../lib/queries';
import { categoriesQuery, groupsQuery } from '../people/api';

type Num = number | string;
type Draft = {
  name: string; rule_id: string; priority: Num; forbid_time: Num; max_time: Num; max_items: Num;
  everyone: boolean; roles: string[]; categories: string[]; groups: string[]; users: string[] | false;
};
const num = (v: Num) => (v === '' ? null : Number(v));
const list = (v: string[] | false) => (v === false ? [] : v);

/** Whom a rule names, in a few words. */
function AppliesTo({ allowed }: { allowed: TAllowed }) {
  const { t } = useTranslation();
  const parts: string[] = [];
  if (allowed.roles !== false) parts.push(allowed.roles.length === 0 ? t('admin_reserve.rules.everyone') : allowed.roles.map((r) => t(`roles.${r}`, { defaultValue: r })).join(', '));
  if (allowed.categories !== false) parts.push(t('admin_reserve.rules.n_categories', { count: allowed.categories.length }));
  if (allowed.groups !== false) parts.push(t('admin_reserve.rules.n_groups', { count: allowed.groups.length }));
  if (allowed.users !== false) parts.push(t('admin_reserve.rules.n_users', { count: allowed.users.length }));
  return <Text size="sm">{parts.length ? parts.join(' · ') : t('admin_reserve.rules.nobody')}</Text>;
}

function RuleForm({ opened, onClose, rule }: { opened: boolean; onClose: () => void; rule: TBookingRule | null }) {
  const { t } = useTranslation();
  const empty: Draft = { name: '', rule_id: 'default', priority: 10, forbid_time: 0, max_time: 60, max_items: 1, everyone: false, roles: [], categories: [], groups: [], users: false };
  const [d, setD] = useState<Draft>(empty);
  const { busy, error, setError, run } = useAction();
  const cats = useQuery({ ...categoriesQuery(), enabled: opened, meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery(), enabled: opened, meta: HANDLES_ERROR });
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setD(
      rule
        ? {
            name: rule.name, rule_id: rule.rule_id, priority: rule.priority, forbid_time: rule.forbid_time, max_time: rule.max_time ?? '', max_items: rule.max_items ?? '',
            everyone: rule.allowed.roles !== false && rule.allowed.roles.length === 0, roles: list(rule.allowed.roles), categories: list(rule.allowed.categories),
            groups: list(rule.allowed.groups), users: rule.allowed.users,
          }
        : empty,
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- filled when the dialog opens or its rule changes; `empty` is a new object every render
  }, [opened, rule, setError]);
  const save = () =>
    run(async () => {
      const allowed: TAllowed = {
        ...NOT_SHARED,
        roles: d.everyone ? [] : d.roles.length ? d.roles : false,
        categories: d.categories.length ? d.categories : false,
        groups: d.groups.length ? d.groups : false,
        users: d.users,
      };
      const body = { name: d.name, rule_id: d.rule_id.trim() || 'default', priority: Number(d.priority), forbid_time: Number(d.forbid_time || 0), max_time: num(d.max_time), max_items: num(d.max_items), allowed };
      if (rule) await updateRule(rule.id, body);
      else await createRule(body);
      await refreshReserve();
      notifySuccess(t('admin_reserve.saved'));
      onClose();
    });
  const roleData = ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }));
  return (
    <FormModal opened={opened} onClose={onClose} title={t(rule ? 'admin_reserve.rules.edit_title' : 'admin_reserve.rules.new_title')} size="lg" onSubmit={save} busy={busy} error={error} testId="rule-form">
      <Group grow align="flex-start">
        <TextInput label={t('admin_reserve.rules.name')} value={d.name} onChange={(e) => setD({ ...d, name: e.currentTarget.value })} required maxLength={100} data-testid="rule-form-name" />
        <TextInput label={t('admin_reserve.rules.rule_id')} description={t('admin_reserve.rules.rule_id_hint')} value={d.rule_id} onChange={(e) => setD({ ...d, rule_id: e.currentTarget.value })} maxLength={64} data-testid="rule-form-rule-id" />
      </Group>
      <Switch label={t('admin_reserve.rules.everyone')} checked={d.everyone} onChange={(e) => setD({ ...d, everyone: e.currentTarget.checked })} data-testid="rule-form-everyone" />
      {!d.everyone && (
        <MultiSelect label={t('admin_reserve.rules.roles')} data={roleData} value={d.roles} onChange={(roles) => setD({ ...d, roles })} clearable data-testid="rule-form-roles" />
      )}
      <Group grow align="flex-start">
        <MultiSelect label={t('admin_reserve.rules.categories')} data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))} value={d.categories} onChange={(categories) => setD({ ...d, categories })} searchable clearable />
        <MultiSelect label={t('admin_reserve.rules.groups')} data={(groups.data?.items ?? []).map((g) => ({ value: g.id, label: `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` }))} value={d.groups} onChange={(groups) => setD({ ...d, groups })} searchable clearable />
      </Group>
      {d.users !== false && d.users.length > 0 && (
        <Text size="xs" c="dimmed">
          {t('admin_reserve.rules.users_kept', { count: d.users.length })}
        </Text>
      )}
      <Group grow align="flex-start">
        <NumberInput label={t('admin_reserve.rules.priority')} description={t('admin_reserve.rules.priority_hint')} min={0} max={100000} value={d.priority} onChange={(v) => setD({ ...d, priority: v })} required data-testid="rule-form-priority" />
        <NumberInput label={t('admin_reserve.rules.forbid_time')} description={t('admin_reserve.rules.forbid_time_hint')} min={0} value={d.forbid_time} onChange={(v) => setD({ ...d, forbid_time: v })} data-testid="rule-form-forbid" />
      </Group>
      <Group grow align="flex-start">
        <NumberInput label={t('admin_reserve.rules.max_time')} description={t('admin_reserve.rules.no_limit_hint')} min={0} value={d.max_time} onChange={(v) => setD({ ...d, max_time: v })} data-testid="rule-form-max-time" />
        <NumberInput label={t('admin_reserve.rules.max_items')} description={t('admin_reserve.rules.no_limit_hint')} min={0} value={d.max_items} onChange={(v) => setD({ ...d, max_items: v })} data-testid="rule-form-max-items" />
      </Group>
    </FormModal>
  );
}

/** /isard-admin/booking_rules: who may book GPU profiles how far ahead, for how long and how many times. */
export default function BookingRulesPage() {
  const { t } = useTranslation();
  const rules = useQuery(bookingRulesQuery());
  const [editing, setEditing] = useState<TBookingRule | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<TBookingRule | null>(null);
  const items = rules.data?.items ?? [];
  const limit = (v: number | null, unit: string) => (v === null ? t('admin_reserve.rules.no_limit') : `${v}${unit}`);
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin_reserve.nav.booking_rules')}
        subtitle={t('admin_reserve.rules.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="rules-new">
            {t('admin_reserve.rules.new')}
          </Button>
        }
      />
      <ListTable
        pending={rules.isPending}
        failed={rules.isError && (
          <Alert color="red" icon={<IconAlertTriangle size={16} />} data-testid="rules-error">
            {t('admin_reserve.load_failed')}
          </Alert>
        )}
        empty={items.length === 0 && (
          <EmptyState icon={<IconCalendarCog size={28} />} title={t('admin_reserve.rules.empty')} body={t('admin_reserve.rules.empty_body')} />
        )}
        minWidth={820}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="rules-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin_reserve.rules.name')}</Table.Th>
            <Table.Th>{t('admin_reserve.rules.applies_to')}</Table.Th>
            <Table.Th>{t('admin_reserve.rules.priority')}</Table.Th>
            <Table.Th>{t('admin_reserve.rules.forbid_time_short')}</Table.Th>
            <Table.Th>{t('admin_reserve.rules.max_time_short')}</Table.Th>
            <Table.Th>{t('admin_reserve.rules.max_items_short')}</Table.Th>
            <Table.Th w={80} />
          </Table.Tr>
        }
      >
        {items.map((r) => (
          <Table.Tr key={r.id} data-testid="rule-row" data-name={r.name}>
            <Table.Td>
              <Text size="sm" fw={600}>
                {r.name}
              </Text>
              <Group gap={4} mt={2}>
                <Badge styles={fullBadge} size="xs" variant="light" color="gray">
                  {r.rule_id}
                </Badge>
                <Text size="xs" c="dimmed">
                  {t('admin_reserve.rules.n_profiles', { count: r.profiles.length })}
                </Text>
              </Group>
            </Table.Td>
            <Table.Td>
              <AppliesTo allowed={r.allowed} />
            </Table.Td>
            <Table.Td>{r.priority}</Table.Td>
            <Table.Td data-testid="rule-forbid">{`${r.forbid_time} ${t('admin_reserve.min')}`}</Table.Td>
            <Table.Td data-testid="rule-max-time">{limit(r.max_time, ` ${t('admin_reserve.min')}`)}</Table.Td>
            <Table.Td data-testid="rule-max-items">{limit(r.max_items, '')}</Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <RowAction label={t('admin_reserve.rules.edit')} icon={<IconEdit size={16} />} onClick={() => setEditing(r)} testId="rule-edit" />
                <RowAction label={t('admin_reserve.rules.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(r)} testId="rule-delete" />
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <Text size="xs" c="dimmed">
        {t('admin_reserve.rules.how')}
      </Text>
      <RuleForm opened={editing !== undefined} onClose={() => setEditing(undefined)} rule={editing ?? null} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin_reserve.rules.delete_title')}
        body={t('admin_reserve.rules.delete_body', { name: deleting?.name ?? '' })}
        confirmLabel={t('admin_reserve.rules.delete')}
        testId="rule-delete"
        onConfirm={async () => {
          await deleteRule(deleting!.id);
          await refreshReserve();
        }}
      />
    </Stack>
  );
}
