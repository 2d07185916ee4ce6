import { useState, type ReactNode } from 'react';
import { ActionIcon, Button, Group, Menu, Paper, Select, Skeleton, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue, useMediaQuery } from '@mantine/hooks';
import { useQuery, type UseQueryOptions } from '@tanstack/react-query';
import { IconDots, IconSearch } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { ListFooter, SortHeader } from '../shared/desktops-list';
import type { ListParams } from './api';
import { OwnerCell, type Owned } from './owner';
import { formatBytes } from '../../../entities/format';
import { ListTable } from '../shared/console';
import { ColumnsMenu, useColumns } from '../shared/columns';
import { PHONE_QUERY } from '../../../components/CardTable';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';
import { categoriesQuery } from '../people/api';
import { dateTimeFormat } from '../../../i18n/intl';

/** A list's column; `hidden`: not shown until the person chooses it in "Columns". */
export type Column<T> = { key: string; label: string; sort?: string; render: (row: T) => ReactNode; adminOnly?: boolean; hidden?: boolean };

/** The columns the content lists share (name and description, owner, category, size, creation), in the same words and looks. */
export function useContentColumns() {
  const { t, i18n } = useTranslation();
  const dateFmt = dateTimeFormat(i18n.language, { dateStyle: 'medium' });
  return {
    name: <T extends { name: string; description: string }>(label: string): Column<T> => ({
      key: 'name', label, sort: 'name',
      render: (r) => (
        <>
          <Text size="sm" fw={600}>
            {builtInText(t, r.name)}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={1}>
            {builtInText(t, r.description)}
          </Text>
        </>
      ),
    }),
    owner: <T extends Owned>(): Column<T> => ({ key: 'owner', label: t('admin_desktops.common.owner'), sort: 'owner', render: (r) => <OwnerCell row={r} /> }),
    category: <T extends { category_name: string }>(): Column<T> => ({ key: 'category', label: t('admin_desktops.common.category'), sort: 'category', adminOnly: true, render: (r) => <Text size="sm">{builtInText(t, r.category_name)}</Text> }),
    size: <T extends { size: number }>(sortable = true): Column<T> => ({
      key: 'size', label: t('admin_desktops.common.size'), ...(sortable ? { sort: 'size' } : {}),
      render: (r) => <Text size="sm" style={{ whiteSpace: 'nowrap' }}>{formatBytes(r.size, i18n.language)}</Text>,
    }),
    created: <T extends { created: string | number }>(): Column<T> => ({
      key: 'created', label: t('admin_desktops.common.created'), sort: 'created',
      render: (r) => <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>{dateFmt.format(new Date(r.created))}</Text>,
    }),
  };
}
type Filters = (params: ListParams, patch: (p: Partial<ListParams>) => void) => ReactNode;

/**
 * The console's lists of templates, media and deployments: one search (name, description, owner),
 * the category filter for admins, the page's own filters, sortable columns, a row menu, paging in SQL.
 */
export function ContentList<T extends { id: string; name: string }>({
  area, icon, query, columns, filters, actions, minWidth = 980,
}: {
  area: 'templates' | 'media' | 'deployments';
  icon: ReactNode;
  query: (p: ListParams) => UseQueryOptions<{ items: T[]; total: number }, Error, { items: T[]; total: number }, readonly unknown[]>;
  columns: Column<T>[];
  filters?: Filters;
  actions: (row: T) => ReactNode;
  minWidth?: number;
}) {
  const { t } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const [params, setParams] = useState<ListParams>({ page: 1, per_page: 25, sort: 'name', order: 'asc', search: '' });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim(), 250);
  const list = useQuery(query({ ...params, search: term.length >= 2 ? term : '' }));
  const cats = useQuery({ ...categoriesQuery(), enabled: isAdmin, meta: HANDLES_ERROR });
  const patch = (p: Partial<ListParams>) => setParams((x) => ({ ...x, page: 1, ...p }));
  const onSort = (field: string) => patch({ sort: field, order: params.sort === field && params.order === 'asc' ? 'desc' : 'asc' });
  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const offered = columns.filter((c) => !c.adminOnly || isAdmin);
  // The person's choice of columns (the name always): the table is as wide as the chosen ones need.
  const chooser = useColumns(
    `admin-${area}`,
    offered.map((c) => ({ key: c.key, label: c.label, shown: !c.hidden, fixed: c.key === 'name', width: Math.round(minWidth / offered.length) })),
  );
  const shown = offered.filter((c) => chooser.has(c.key));
  const phone = useMediaQuery(PHONE_QUERY) ?? false;
  const filtered = Boolean(term.length >= 2 || Object.entries(params).some(([k, v]) => !['page', 'per_page', 'sort', 'order', 'search'].includes(k) && v));

  return (
    <Stack gap="md">
      <PageHeader title={t(`admin_nav.${area}`)} subtitle={t(`admin_desktops.${area}.subtitle`)} />
      <Paper withBorder radius="lg" p="md">
        <Group gap="sm" align="flex-end" wrap="wrap">
          <TextInput
            leftSection={<IconSearch size={16} />}
            placeholder={t('admin_desktops.common.search_short')}
            aria-label={t('admin_desktops.common.search_short')}
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              setParams((x) => ({ ...x, page: 1 }));
            }}
            style={{ flex: '2 1 240px' }}
            data-testid={`${area}-search`}
          />
          {isAdmin && (
            <Select
              placeholder={t('admin_desktops.common.category')}
              aria-label={t('admin_desktops.common.category')}
              data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
              value={(params.category as string) ?? null}
              onChange={(v) => patch({ category: v })}
              clearable
              searchable
              style={{ flex: '1 1 150px' }}
              data-testid={`${area}-filter-category`}
            />
          )}
          {filters?.(params, patch)}
          {/* At phone width each row is a card with every column. */}
          {!phone && <ColumnsMenu state={chooser} testPrefix={area} />}
        </Group>
      </Paper>
      <ListTable
        pending={list.isPending}
        loading={
          <Stack gap="xs" data-testid={`${area}-loading`}>
            {[0, 1, 2].map((i) => (
              <Skeleton key={i} h={40} radius="md" />
            ))}
          </Stack>
        }
        failed={list.isError && !list.data && (
          <EmptyState
            icon={icon}
            title={t('admin_desktops.common.load_failed')}
            action={
              <Button variant="light" onClick={() => void list.refetch()} data-testid={`${area}-retry`}>
                {t('admin_desktops.common.retry')}
              </Button>
            }
          />
        )}
        empty={items.length === 0 && (
          <EmptyState
            icon={icon}
            title={t(`admin_desktops.${area}.${filtered ? 'none_found' : 'empty'}`)}
            body={t(`admin_desktops.${area}.${filtered ? 'none_found_body' : 'empty_body'}`)}
          />
        )}
        minWidth={chooser.width}
        highlightOnHover
        verticalSpacing="xs"
        data-testid={`${area}-table`}
        data-total={total}
        head={
          <Table.Tr>
            {shown.map((c) =>
              c.sort ? (
                <SortHeader key={c.key} testPrefix={area} label={c.label} field={c.sort} sort={params.sort} order={params.order} onSort={onSort} />
              ) : (
                <Table.Th key={c.key}>{c.label}</Table.Th>
              ),
            )}
            <Table.Th w={48} />
          </Table.Tr>
        }
      >
        {items.map((row) => (
          <Table.Tr key={row.id} data-testid={`${area}-row`} data-name={row.name}>
            {shown.map((c) => (
              <Table.Td key={c.key}>{c.render(row)}</Table.Td>
            ))}
            <Table.Td>
              <Menu position="bottom-end" withinPortal>
                <Menu.Target>
                  <ActionIcon variant="subtle" color="gray" aria-label={t('admin_desktops.common.actions', { name: row.name })} data-testid={`${area}-actions`}>
                    <IconDots size={16} />
                  </ActionIcon>
                </Menu.Target>
                <Menu.Dropdown>{actions(row)}</Menu.Dropdown>
              </Menu>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <ListFooter
        testPrefix={area}
        total={total}
        page={params.page}
        perPage={params.per_page}
        onPage={(page) => setParams((x) => ({ ...x, page }))}
        onPerPage={(n) => patch({ per_page: n })}
        totalLabel={t('admin_desktops.common.total', { count: total })}
        perPageLabel={t('admin_desktops.common.per_page')}
      />
    </Stack>
  );
}
