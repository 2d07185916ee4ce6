import { useMemo, useState } from 'react';
import { Badge, Code, Group, Pagination, Paper, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconApi, IconSearch, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { API_TOKEN_SCOPES, API_TOKEN_STATES, type TAdminApiToken } from '@vdi/contracts';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { apiTokensQuery, categoriesQuery, refreshPeople, revokeApiToken, type ApiTokenListParams } from './api';
import { ConfirmDelete, fullBadge, ListTable, RowAction } from '../shared/console';
import { SortHeader } from '../shared/desktops-list';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';

const PER_PAGE = ['25', '50', '100'];
const STATE_COLOR = { active: 'teal', expired: 'orange', revoked: 'gray' } as const;
const stateOf = (tk: TAdminApiToken): (typeof API_TOKEN_STATES)[number] =>
  tk.revoked ? 'revoked' : tk.expires && new Date(tk.expires).getTime() <= Date.now() ? 'expired' : 'active';

/** /isard-admin/api_tokens: everyone's personal API tokens the caller reaches (managers: their category's), revocable. */
export default function ApiTokensPage() {
  const { t, i18n } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const [params, setParams] = useState<ApiTokenListParams>({ page: 1, per_page: 25, sort: 'created', order: 'desc', search: '', state: 'active' });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 250);
  const query = { ...params, search: term.trim().length >= 2 ? term.trim() : '' };
  const list = useQuery(apiTokensQuery(query));
  const cats = useQuery({ ...categoriesQuery(), enabled: isAdmin, meta: HANDLES_ERROR });
  const [revoking, setRevoking] = useState<TAdminApiToken | null>(null);
  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / params.per_page));
  const patch = (p: Partial<ApiTokenListParams>) => setParams((x) => ({ ...x, page: 1, ...p }));
  const onSort = (field: string) => patch({ sort: field, order: params.sort === field && params.order === 'asc' ? 'desc' : 'asc' });
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  const when = (iso: string | null, none: string) => (iso ? dateFmt.format(new Date(iso)) : none);
  const sortProps = { sort: params.sort, order: params.order, onSort, testPrefix: 'api-tokens' };
  // The list opens on the live tokens: only a filter the person chose makes an empty list a "none match".
  const filtered = Boolean(query.search || params.category || params.scope || (params.state && params.state !== 'active'));

  return (
    <Stack gap="md">
      <PageHeader title={t('admin.nav.api_tokens')} subtitle={t('admin.api_tokens.subtitle')} />
      <Paper withBorder radius="lg" p="md">
        <Group gap="sm" align="flex-end" wrap="wrap">
          <TextInput
            leftSection={<IconSearch size={16} />}
            placeholder={t('admin.api_tokens.search')}
            aria-label={t('admin.api_tokens.search')}
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              setParams((x) => ({ ...x, page: 1 }));
            }}
            style={{ flex: '1 1 220px' }}
            data-testid="api-tokens-search"
          />
          {isAdmin && (
            <Select
              placeholder={t('admin.users.category')}
              aria-label={t('admin.users.category')}
              data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
              value={params.category ?? null}
              onChange={(v) => patch({ category: v })}
              clearable
              searchable
              style={{ flex: '1 1 150px' }}
              data-testid="api-tokens-filter-category"
            />
          )}
          <Select
            placeholder={t('admin.api_tokens.scope')}
            aria-label={t('admin.api_tokens.scope')}
            data={API_TOKEN_SCOPES.map((s) => ({ value: s, label: t(`admin.api_tokens.scopes.${s}`) }))}
            value={params.scope ?? null}
            onChange={(v) => patch({ scope: v })}
            clearable
            style={{ flex: '1 1 140px' }}
            data-testid="api-tokens-filter-scope"
          />
          <Select
            placeholder={t('admin.api_tokens.state')}
            aria-label={t('admin.api_tokens.state')}
            data={API_TOKEN_STATES.map((s) => ({ value: s, label: t(`admin.api_tokens.states.${s}`) }))}
            value={params.state ?? null}
            onChange={(v) => patch({ state: v })}
            clearable
            style={{ flex: '1 1 140px' }}
            data-testid="api-tokens-filter-state"
          />
        </Group>
      </Paper>
      <ListTable
        pending={list.isPending}
        empty={items.length === 0 && (
          <EmptyState
            icon={<IconApi size={28} />}
            title={t(filtered ? 'admin.api_tokens.none_match' : 'admin.api_tokens.empty')}
            body={t(filtered ? 'admin.api_tokens.none_match_body' : 'admin.api_tokens.empty_body')}
          />
        )}
        minWidth={900}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="api-tokens-table"
        head={
          <Table.Tr>
            <SortHeader label={t('admin.api_tokens.owner')} field="user" {...sortProps} />
            <SortHeader label={t('admin.api_tokens.name')} field="name" {...sortProps} />
            <Table.Th>{t('admin.api_tokens.scope')}</Table.Th>
            <SortHeader label={t('admin.api_tokens.created')} field="created" {...sortProps} />
            <SortHeader label={t('admin.api_tokens.last_used')} field="last_used" {...sortProps} />
            <SortHeader label={t('admin.api_tokens.expires')} field="expires" {...sortProps} />
            <Table.Th w={60} />
          </Table.Tr>
        }
      >
        {items.map((tk) => {
          const state = stateOf(tk);
          return (
            <Table.Tr key={tk.id} data-testid="api-token-row" data-name={tk.name}>
              <Table.Td>
                <Text size="sm">{tk.user_name}</Text>
                <Text size="xs" c="dimmed">
                  {tk.username}
                  {isAdmin && ` · ${builtInText(t, tk.category_name)}`}
                </Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{tk.name}</Text>
                <Code fz="xs">{tk.prefix}</Code>
              </Table.Td>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <Badge styles={fullBadge} variant="light" radius="sm" color={tk.scope === 'read' ? 'blue' : 'violet'}>
                    {t(`admin.api_tokens.scopes.${tk.scope}`)}
                  </Badge>
                  {state !== 'active' && (
                    <Badge styles={fullBadge} variant="outline" radius="sm" color={STATE_COLOR[state]} data-testid="api-token-state">
                      {t(`admin.api_tokens.states.${state}`)}
                    </Badge>
                  )}
                </Group>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{when(tk.created, '—')}</Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" c={tk.last_used ? undefined : 'dimmed'}>
                  {when(tk.last_used, t('admin.api_tokens.never_used'))}
                </Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" c={tk.expires ? undefined : 'dimmed'}>
                  {when(tk.expires, t('admin.api_tokens.no_expiry'))}
                </Text>
              </Table.Td>
              <Table.Td>
                {!tk.revoked && (
                  <RowAction label={t('admin.api_tokens.revoke')} icon={<IconTrash size={16} />} color="red" onClick={() => setRevoking(tk)} testId="api-token-revoke" />
                )}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </ListTable>
      {total > 0 && (
        <Group justify="space-between" wrap="wrap">
          <Group gap="xs">
            <Text size="sm" c="dimmed" data-testid="api-tokens-total">
              {t('admin.common.total', { count: total })}
            </Text>
            <Select size="xs" w={80} data={PER_PAGE} value={String(params.per_page)} onChange={(v) => v && patch({ per_page: Number(v) })} aria-label={t('admin.common.per_page')} allowDeselect={false} />
          </Group>
          <Pagination total={pages} value={params.page} onChange={(page) => setParams((x) => ({ ...x, page }))} size="sm" data-testid="api-tokens-pages" />
        </Group>
      )}
      <ConfirmDelete
        opened={revoking !== null}
        onClose={() => setRevoking(null)}
        title={t('admin.api_tokens.revoke_title')}
        body={t('admin.api_tokens.revoke_body', { name: revoking?.name ?? '', owner: revoking?.username ?? '' })}
        confirmLabel={t('admin.api_tokens.revoke')}
        testId="api-token-revoke"
        onConfirm={async () => {
          await revokeApiToken(revoking!.id);
          await refreshPeople();
        }}
      />
    </Stack>
  );
}
