import { useState } from 'react';
import { Group, Pagination, Select, Table, Text, UnstyledButton } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconChevronDown, IconChevronUp, IconSelector } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { PRIVILEGED_ROLES } from '@vdi/contracts';
import { usersQuery } from '../people/api';
import { builtInText } from '../../../lib/built-in-text';
import { HANDLES_ERROR } from '../../../lib/queries';

/**
 * Pieces the console's long lists share (users, desktops, templates, media, deployments): a
 * sortable column header, the footer with the count, page size and pages, a user picker that
 * searches the server, and a confirmation dialog whose error shows inside.
 */

/** A column header that sorts the list by its field (a second click reverses the order). */
export function SortHeader({ label, field, sort, order, onSort, testPrefix }: {
  label: string; field: string; sort: string; order: 'asc' | 'desc'; onSort: (f: string) => void; testPrefix: string;
}) {
  const Icon = sort !== field ? IconSelector : order === 'asc' ? IconChevronUp : IconChevronDown;
  return (
    // aria-sort belongs to the column header, not to the button in it (axe: aria-allowed-attr).
    <Table.Th aria-sort={sort === field ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <UnstyledButton onClick={() => onSort(field)} data-testid={`${testPrefix}-sort-${field}`}>
        <Group gap={4} wrap="nowrap">
          <Text fw={600} size="sm" style={{ whiteSpace: 'nowrap' }}>
            {label}
          </Text>
          <Icon size={14} />
        </Group>
      </UnstyledButton>
    </Table.Th>
  );
}

const PER_PAGE = ['25', '50', '100'];

/** Below a list: how many in all, rows per page, the pages. */
export function ListFooter({ total, page, perPage, onPage, onPerPage, testPrefix, totalLabel, perPageLabel }: {
  total: number; page: number; perPage: number; onPage: (p: number) => void; onPerPage: (n: number) => void; testPrefix: string;
  totalLabel: string; perPageLabel: string;
}) {
  if (total === 0) return null;
  return (
    <Group justify="space-between" wrap="wrap">
      <Group gap="xs">
        <Text size="sm" c="dimmed" data-testid={`${testPrefix}-total`}>
          {totalLabel}
        </Text>
        <Select size="xs" w={80} data={PER_PAGE} value={String(perPage)} onChange={(v) => v && onPerPage(Number(v))} aria-label={perPageLabel} allowDeselect={false} />
      </Group>
      <Pagination total={Math.max(1, Math.ceil(total / perPage))} value={page} onChange={onPage} size="sm" data-testid={`${testPrefix}-pages`} />
    </Group>
  );
}

/** A user chosen by name (two letters at least, searched on the server); `privileged`: only those who may own templates. */
export function UserPicker({ label, value, onChange, privileged, testId, placeholder }: {
  label: string; value: string | null; onChange: (id: string | null) => void; privileged?: boolean; testId: string; placeholder?: string;
}) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim(), 250);
  const found = useQuery({ ...usersQuery({ page: 1, per_page: 30, sort: 'name', order: 'asc', search: term }), enabled: term.length >= 2, meta: HANDLES_ERROR });
  const [chosen, setChosen] = useState<{ value: string; label: string } | null>(null);
  const options = (found.data?.items ?? [])
    .filter((u) => !privileged || (PRIVILEGED_ROLES as readonly string[]).includes(u.role))
    .map((u) => ({ value: u.id, label: `${u.name} (${u.username} · ${builtInText(t, u.category_name)})` }));
  const data = chosen && !options.some((o) => o.value === chosen.value) ? [chosen, ...options] : options;
  return (
    <Select
      label={label}
      aria-label={label}
      placeholder={placeholder}
      searchable
      clearable
      data={data}
      value={value}
      searchValue={search}
      onSearchChange={setSearch}
      onChange={(v, option) => {
        setChosen(option ?? null);
        onChange(v);
      }}
      filter={({ options: o }) => o}
      nothingFoundMessage={term.length >= 2 && !found.isFetching ? '—' : undefined}
      data-testid={testId}
      comboboxProps={{ withinPortal: true }}
    />
  );
}

