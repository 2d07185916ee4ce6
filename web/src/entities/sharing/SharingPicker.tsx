import { useMemo, useState } from 'react';
import { Alert, Checkbox, Group, MultiSelect, Stack, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconLock, IconUsers, IconUsersGroup, IconWorld } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ALLOWED_SEARCH_MIN, type TAllowedTableItem, type TTemplateAllowed } from '@vdi/contracts';
import { searchAllowed } from './api';
import { HANDLES_ERROR } from '../../lib/queries';
import '../../i18n/areas/content';

/** Search-as-you-type (2 letters at least) over the groups or users the caller may share with. */
export function AllowedSearch({ table, value, onChange, disabled, ns = 'templates.sharing', testId }: { table: 'groups' | 'users'; value: string[]; onChange: (v: string[]) => void; disabled?: boolean; ns?: string; testId?: string }) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim(), 200);
  const [known, setKnown] = useState<Record<string, TAllowedTableItem>>({});
  // Names of what is already chosen.
  useQuery({
    queryKey: ['allowed', table, 'ids', [...value].sort().join(',')],
    queryFn: async () => {
      const items = await searchAllowed(table, { ids: value });
      setKnown((k) => ({ ...k, ...Object.fromEntries(items.map((i) => [i.id, i])) }));
      return items;
    },
    enabled: value.length > 0 && value.some((id) => !known[id]),
    staleTime: 60_000,
    meta: HANDLES_ERROR,
  });
  const results = useQuery({
    queryKey: ['allowed', table, 'term', term],
    queryFn: () => searchAllowed(table, { term }),
    enabled: term.length >= ALLOWED_SEARCH_MIN,
    staleTime: 30_000,
    meta: HANDLES_ERROR,
  });
  const data = useMemo(() => {
    const all = new Map<string, TAllowedTableItem>();
    for (const id of value) all.set(id, known[id] ?? { id, name: id, detail: null });
    for (const r of results.data ?? []) all.set(r.id, r);
    return [...all.values()].map((i) => ({ value: i.id, label: i.detail ? `${i.name} (${i.detail})` : i.name }));
  }, [value, known, results.data]);
  const remember = (ids: string[]) => {
    const found = Object.fromEntries((results.data ?? []).filter((r) => ids.includes(r.id)).map((r) => [r.id, r]));
    setKnown((k) => ({ ...k, ...found }));
    onChange(ids);
  };
  return (
    <MultiSelect
      data={data}
      value={value}
      onChange={remember}
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      filter={({ options }) => options}
      hidePickedOptions
      clearable
      disabled={disabled}
      placeholder={value.length ? undefined : t(`${ns}.search_${table}`)}
      nothingFoundMessage={term.length < ALLOWED_SEARCH_MIN ? t(`${ns}.type_more`, { count: ALLOWED_SEARCH_MIN }) : results.isFetching ? t('common.loading') : t(`${ns}.nothing`)}
      aria-label={t(`${ns}.${table}`)}
      data-testid={testId ?? `sharing-${table}-search`}
      comboboxProps={{ withinPortal: true }}
    />
  );
}

/**
 * Who may use a template: nobody else (not shared), chosen groups and users, or — an empty list —
 * everyone of the category (spec 001 §3: "an empty list means everyone").
 */
export function SharingPicker({ value, onChange, disabled, ns = 'templates.sharing' }: { value: TTemplateAllowed; onChange: (v: TTemplateAllowed) => void; disabled?: boolean; /** where its texts are (deployments word them their own way) */ ns?: string }) {
  const { t } = useTranslation();
  const groups = value.groups;
  const users = value.users;
  const everyone = (groups !== false && groups.length === 0) || (users !== false && users.length === 0);
  const shared = groups !== false || users !== false || value.roles !== false || value.categories !== false;
  return (
    <Stack gap="sm">
      <Checkbox
        label={
          <Group gap={6} wrap="nowrap">
            <IconUsersGroup size={16} />
            {t(`${ns}.groups`)}
          </Group>
        }
        checked={groups !== false}
        onChange={(e) => onChange({ ...value, groups: e.currentTarget.checked ? [] : false })}
        disabled={disabled}
        data-testid="sharing-groups"
      />
      {groups !== false && <AllowedSearch table="groups" value={groups} onChange={(g) => onChange({ ...value, groups: g })} disabled={disabled} ns={ns} />}
      <Checkbox
        label={
          <Group gap={6} wrap="nowrap">
            <IconUsers size={16} />
            {t(`${ns}.users`)}
          </Group>
        }
        checked={users !== false}
        onChange={(e) => onChange({ ...value, users: e.currentTarget.checked ? [] : false })}
        disabled={disabled}
        data-testid="sharing-users"
      />
      {users !== false && <AllowedSearch table="users" value={users} onChange={(u) => onChange({ ...value, users: u })} disabled={disabled} ns={ns} />}
      {!shared ? (
        <Alert variant="light" color="gray" icon={<IconLock size={16} />} p="xs" data-testid="sharing-summary">
          <Text size="xs">{t(`${ns}.private`)}</Text>
        </Alert>
      ) : everyone ? (
        <Alert variant="light" color="teal" icon={<IconWorld size={16} />} p="xs" data-testid="sharing-summary">
          <Text size="xs">{t(`${ns}.everyone_hint`)}</Text>
        </Alert>
      ) : (
        <Text size="xs" c="dimmed" data-testid="sharing-summary">
          {t(`${ns}.chosen_hint`)}
        </Text>
      )}
    </Stack>
  );
}

/** One line about whom a template is shared with. */
export function sharingSummary(t: (k: string, o?: Record<string, unknown>) => string, a: TTemplateAllowed): { text: string; kind: 'private' | 'everyone' | 'some' } {
  const g = a.groups;
  const u = a.users;
  if ((g !== false && g.length === 0) || (u !== false && u.length === 0) || (a.roles !== false && a.roles.length === 0)) return { text: t('templates.sharing.everyone'), kind: 'everyone' };
  const parts: string[] = [];
  if (g !== false && g.length) parts.push(t('templates.sharing.n_groups', { count: g.length }));
  if (u !== false && u.length) parts.push(t('templates.sharing.n_users', { count: u.length }));
  if (a.roles !== false && a.roles.length) parts.push(t('templates.sharing.n_roles', { count: a.roles.length }));
  if (a.categories !== false) parts.push(t('templates.sharing.n_categories', { count: a.categories.length }));
  return parts.length ? { text: t('templates.sharing.with', { list: parts.join(', ') }), kind: 'some' } : { text: t('templates.sharing.not_shared'), kind: 'private' };
}
