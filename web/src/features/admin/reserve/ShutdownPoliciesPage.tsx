import { useState, useLayoutEffect } from 'react';
import { Alert, Badge, Button, Group, NumberInput, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertTriangle, IconClockPause, IconEdit, IconLock, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_SHUTDOWN_WARNINGS, ROLES, SHUTDOWN_POLICY_KINDS, type TShutdownPolicy, type TShutdownPolicyKind } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { ConfirmDelete, fullBadge, RowAction, FormModal, ListTable } from '../shared/console';
import { createPolicy, deletePolicy, policiesQuery, refreshReserve, updatePolicy } from './api';
import '../../../i18n/areas/admin-reserve';
import { builtInText } from '../../../lib/built-in-text';
import { categoriesQuery, groupsQuery, usersQuery } from '../people/api';

type Num = number | string;
type Draft = { name: string; kind: TShutdownPolicyKind; target: string | null; max_time: Num; idle_time: Num; warnings: string; enabled: boolean };
const minutesOrNull = (v: Num) => (v === '' ? null : Number(v));
/** "5, 1" → [5, 1] (whole minutes, at most 5). */
const parseWarnings = (s: string) =>
  [...new Set(s.split(/[\s,;]+/).map((x) => Number(x)).filter((n) => Number.isInteger(n) && n > 0))].sort((a, b) => b - a).slice(0, 5);

/** Choose whom the policy is for: a role, a category, a group or a user (users found by name). */
function TargetSelect({ kind, value, label, onChange, disabled, isAdmin }: {
  kind: TShutdownPolicyKind; value: string | null; label?: string; onChange: (v: string | null) => void; disabled: boolean; isAdmin: boolean;
}) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 250);
  const cats = useQuery({ ...categoriesQuery(), enabled: kind === 'category', meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery(), enabled: kind === 'group', meta: HANDLES_ERROR });
  const users = useQuery({ ...usersQuery({ page: 1, per_page: 30, sort: 'username', order: 'asc', search: term.trim() }), enabled: kind === 'user' && !disabled, meta: HANDLES_ERROR });
  const data =
    kind === 'role'
      ? ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }))
      : kind === 'category'
        ? (cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))
        : kind === 'group'
          ? (groups.data?.items ?? []).map((g) => ({ value: g.id, label: isAdmin ? `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` : builtInText(t, g.name) }))
          : (users.data?.items ?? []).map((u) => ({ value: u.id, label: `${u.name} (${u.username})` }));
  // The chosen user keeps their name while the search (which then holds that name) finds others.
  const [chosen, setChosen] = useState<{ value: string; label: string } | null>(null);
  const shown = value && !data.some((d) => d.value === value) ? [...data, chosen?.value === value ? chosen : { value, label: label ?? value }] : data;
  return (
    <Select
      label={t(`admin_reserve.policies.target_${kind}`)}
      data={shown}
      value={value}
      onChange={(v, option) => {
        setChosen(v && option ? { value: v, label: option.label } : null);
        onChange(v);
      }}
      searchable
      onSearchChange={kind === 'user' ? setSearch : undefined}
      nothingFoundMessage={t('admin_reserve.policies.nothing_found')}
      disabled={disabled}
      required
      data-testid="policy-form-target"
    />
  );
}

function PolicyForm({ opened, onClose, policy, isAdmin }: { opened: boolean; onClose: () => void; policy: TShutdownPolicy | null; isAdmin: boolean }) {
  const { t } = useTranslation();
  const empty: Draft = { name: '', kind: isAdmin ? 'role' : 'group', target: null, max_time: '', idle_time: '', warnings: DEFAULT_SHUTDOWN_WARNINGS.join(', '), enabled: true };
  const [d, setD] = useState<Draft>(empty);
  const { busy, error, setError, run } = useAction();
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setD(
      policy
        ? { name: policy.name, kind: policy.kind, target: policy.target, max_time: policy.max_time ?? '', idle_time: policy.idle_time ?? '', warnings: policy.warnings.join(', '), enabled: policy.enabled }
        : empty,
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- filled when the dialog opens or its policy changes; `empty` is a new object every render
  }, [opened, policy, setError]);
  const save = () =>
    run(async () => {
      const common = { name: d.name, max_time: minutesOrNull(d.max_time), idle_time: minutesOrNull(d.idle_time), warnings: parseWarnings(d.warnings), enabled: d.enabled };
      if (policy) await updatePolicy(policy.id, common);
      else await createPolicy({ ...common, kind: d.kind, target: d.target ?? '' });
      await refreshReserve();
      notifySuccess(t('admin_reserve.saved'));
      onClose();
    });
  const kinds = SHUTDOWN_POLICY_KINDS.filter((k) => isAdmin || k !== 'role').map((k) => ({ value: k, label: t(`admin_reserve.policies.kind_${k}`) }));
  return (
    <FormModal opened={opened} onClose={onClose} title={t(policy ? 'admin_reserve.policies.edit_title' : 'admin_reserve.policies.new_title')} size="lg" onSubmit={save} busy={busy} error={error} testId="policy-form">
      <TextInput label={t('admin_reserve.policies.name')} value={d.name} onChange={(e) => setD({ ...d, name: e.currentTarget.value })} required maxLength={100} data-testid="policy-form-name" />
      <Group grow align="flex-start">
        <Select label={t('admin_reserve.policies.kind')} data={kinds} value={d.kind} onChange={(v) => v && setD({ ...d, kind: v as TShutdownPolicyKind, target: null })} allowDeselect={false} disabled={Boolean(policy)} data-testid="policy-form-kind" />
        <TargetSelect kind={d.kind} value={d.target} label={policy?.target_name} onChange={(target) => setD({ ...d, target })} disabled={Boolean(policy)} isAdmin={isAdmin} />
      </Group>
      <Group grow align="flex-start">
        <NumberInput label={t('admin_reserve.policies.max_time')} description={t('admin_reserve.policies.max_time_hint')} min={1} value={d.max_time} onChange={(v) => setD({ ...d, max_time: v })} data-testid="policy-form-max-time" />
        <NumberInput label={t('admin_reserve.policies.idle_time')} description={t('admin_reserve.policies.idle_time_hint')} min={1} value={d.idle_time} onChange={(v) => setD({ ...d, idle_time: v })} data-testid="policy-form-idle-time" />
      </Group>
      <TextInput label={t('admin_reserve.policies.warnings')} description={t('admin_reserve.policies.warnings_hint')} value={d.warnings} onChange={(e) => setD({ ...d, warnings: e.currentTarget.value })} data-testid="policy-form-warnings" />
      <Switch label={t('admin_reserve.policies.enabled')} checked={d.enabled} onChange={(e) => setD({ ...d, enabled: e.currentTarget.checked })} />
    </FormModal>
  );
}

/** /isard-admin/shutdown_policies: when running desktops stop by themselves (longest time started, idle time). */
export default function ShutdownPoliciesPage() {
  const { t } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const policies = useQuery(policiesQuery());
  const [editing, setEditing] = useState<TShutdownPolicy | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<TShutdownPolicy | null>(null);
  const items = policies.data?.items ?? [];
  const minutes = (v: number | null) => (v === null ? '—' : t('admin_reserve.policies.minutes', { count: v }));
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin_reserve.nav.shutdown_policies')}
        subtitle={t('admin_reserve.policies.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="policies-new">
            {t('admin_reserve.policies.new')}
          </Button>
        }
      />
      <ListTable
        pending={policies.isPending}
        failed={policies.isError && (
          <Alert color="red" icon={<IconAlertTriangle size={16} />} data-testid="policies-error">
            {t('admin_reserve.load_failed')}
          </Alert>
        )}
        empty={items.length === 0 && (
          <EmptyState icon={<IconClockPause size={28} />} title={t('admin_reserve.policies.empty')} body={t('admin_reserve.policies.empty_body')} />
        )}
        minWidth={760}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="policies-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin_reserve.policies.name')}</Table.Th>
            <Table.Th>{t('admin_reserve.policies.applies_to')}</Table.Th>
            <Table.Th>{t('admin_reserve.policies.max_time_short')}</Table.Th>
            <Table.Th>{t('admin_reserve.policies.idle_time_short')}</Table.Th>
            <Table.Th>{t('admin_reserve.policies.warnings_short')}</Table.Th>
            <Table.Th w={80} />
          </Table.Tr>
        }
      >
        {items.map((p) => (
          <Table.Tr key={p.id} data-testid="policy-row" data-name={p.name}>
            <Table.Td>
              <Group gap={6} wrap="nowrap">
                <Text size="sm" fw={600}>
                  {p.name}
                </Text>
                {!p.enabled && (
                  <Badge styles={fullBadge} size="xs" color="gray" variant="light">
                    {t('admin_reserve.policies.off')}
                  </Badge>
                )}
              </Group>
            </Table.Td>
            <Table.Td>
              <Badge styles={fullBadge} variant="light" color={p.kind === 'role' ? 'grape' : p.kind === 'category' ? 'indigo' : p.kind === 'group' ? 'teal' : 'orange'}>
                {t(`admin_reserve.policies.kind_${p.kind}`)}
              </Badge>
              <Text size="sm" mt={2}>
                {p.kind === 'role' ? t(`roles.${p.target}`, { defaultValue: p.target_name }) : builtInText(t, p.target_name)}
                {isAdmin && p.category_name && p.kind !== 'category' ? ` · ${builtInText(t, p.category_name)}` : ''}
              </Text>
            </Table.Td>
            <Table.Td data-testid="policy-max-time">{minutes(p.max_time)}</Table.Td>
            <Table.Td data-testid="policy-idle-time">{minutes(p.idle_time)}</Table.Td>
            <Table.Td>{p.warnings.length ? p.warnings.map((w) => t('admin_reserve.policies.minutes', { count: w })).join(', ') : '—'}</Table.Td>
            <Table.Td>
              {p.editable ? (
                <Group gap={4} wrap="nowrap">
                  <RowAction label={t('admin_reserve.policies.edit')} icon={<IconEdit size={16} />} onClick={() => setEditing(p)} testId="policy-edit" />
                  <RowAction label={t('admin_reserve.policies.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(p)} testId="policy-delete" />
                </Group>
              ) : (
                <RowAction label={t('admin_reserve.policies.read_only')} icon={<IconLock size={16} />} color="gray" onClick={() => undefined} testId="policy-locked" />
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <Text size="xs" c="dimmed">
        {t('admin_reserve.policies.how')}
      </Text>
      <PolicyForm opened={editing !== undefined} onClose={() => setEditing(undefined)} policy={editing ?? null} isAdmin={isAdmin} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin_reserve.policies.delete_title')}
        body={t('admin_reserve.policies.delete_body', { name: deleting?.name ?? '' })}
        confirmLabel={t('admin_reserve.policies.delete')}
        testId="policy-delete"
        onConfirm={async () => {
          await deletePolicy(deleting!.id);
          await refreshReserve();
        }}
      />
    </Stack>
  );
}
