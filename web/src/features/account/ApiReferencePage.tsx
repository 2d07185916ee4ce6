import { useMemo, useState } from 'react';
import { Accordion, Anchor, Badge, Code, Group, Paper, Skeleton, Stack, Table, Text, TextInput, Title, Tooltip } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { IconDownload, IconLock, IconSearch } from '@tabler/icons-react';
import { API, api } from '../../lib/api';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState } from '../../components/EmptyState';
import '../../i18n/areas/account';

// The portal's own rendering of GET /api/v3/openapi.json (the document the server generates from the
// shared contracts): every call by area, its parameters, body and answer as compact types.

type Schema = {
  type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; enum?: unknown[]; const?: unknown;
  anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; additionalProperties?: Schema | boolean; format?: string; nullable?: boolean;
};
type Parameter = { name: string; in: 'path' | 'query'; required: boolean; schema: Schema };
type Operation = {
  operationId: string; tags: string[]; parameters?: Parameter[]; security?: unknown[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};
type Doc = { info: { title: string; version: string; description: string }; paths: Record<string, Record<string, Operation>> };

const METHOD_COLOR: Record<string, string> = { get: 'blue', post: 'teal', put: 'orange', patch: 'yellow', delete: 'red' };
const DEPTH = 6;

/** A JSON Schema as a short TypeScript-like type: `{ name: string; scope: "read" | "full" }`. */
export function typeText(s: Schema | boolean | undefined, depth = 0, pad = ''): string {
  if (s === undefined || s === true) return 'any';
  if (s === false) return 'never';
  if (depth > DEPTH) return '…';
  const inner = (x: Schema | boolean | undefined) => typeText(x, depth + 1, pad);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = s.anyOf ?? s.oneOf;
  if (union) return [...new Set(union.map(inner))].join(' | ');
  if (s.allOf) return s.allOf.map(inner).join(' & ');
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length > 1) return types.map((ty) => typeText({ ...s, type: ty }, depth, pad)).join(' | ');
  switch (types[0]) {
    case 'array':
      return `${/[|&]/.test(inner(s.items)) ? `(${inner(s.items)})` : inner(s.items)}[]`;
    case 'object': {
      const props = Object.entries(s.properties ?? {});
      if (props.length === 0) return s.additionalProperties && s.additionalProperties !== true ? `Record<string, ${inner(s.additionalProperties)}>` : '{}';
      const next = `${pad}  `;
      const lines = props.map(([k, v]) => `${next}${k}${s.required?.includes(k) ? '' : '?'}: ${typeText(v, depth + 1, next)};`);
      return `{\n${lines.join('\n')}\n${pad}}`;
    }
    case 'integer':
      return 'integer';
    case undefined:
      return 'any';
    default:
      return `${types[0]}${s.format ? ` (${s.format})` : ''}`;
  }
}

const bodyOf = (c?: Record<string, { schema: Schema }>) => (c ? Object.values(c)[0]?.schema : undefined);

function OperationDetails({ op }: { op: Operation }) {
  const { t } = useTranslation();
  const params = op.parameters ?? [];
  const body = bodyOf(op.requestBody?.content);
  const answers = Object.entries(op.responses).filter(([status, r]) => status !== 'default' && r.content);
  return (
    <Stack gap="sm">
      {params.length > 0 && (
        <div>
          <Text size="xs" tt="uppercase" fw={600} c="dimmed" mb={4}>
            {t('account.api_reference.parameters')}
          </Text>
          <Table.ScrollContainer minWidth={360}>
            <Table withTableBorder verticalSpacing={4} fz="sm">
              <Table.Tbody>
                {params.map((p) => (
                  <Table.Tr key={`${p.in}-${p.name}`}>
                    <Table.Td>
                      <Code>{p.name}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Text size="xs" c="dimmed">
                        {t(`account.api_reference.in.${p.in}`)}
                        {p.required ? ` · ${t('account.api_reference.required')}` : ''}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Code>{typeText(p.schema)}</Code>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </div>
      )}
      {body && (
        <div>
          <Text size="xs" tt="uppercase" fw={600} c="dimmed" mb={4}>
            {t('account.api_reference.body')}
          </Text>
          <Code block>{typeText(body)}</Code>
        </div>
      )}
      {answers.map(([status, r]) => (
        <div key={status}>
          <Text size="xs" tt="uppercase" fw={600} c="dimmed" mb={4}>
            {t('account.api_reference.answer', { status })}
          </Text>
          <Code block mah={360} style={{ overflow: 'auto' }}>
            {typeText(bodyOf(r.content))}
          </Code>
        </div>
      ))}
      {params.length === 0 && !body && answers.length === 0 && (
        <Text size="sm" c="dimmed">
          {t('account.api_reference.no_details')}
        </Text>
      )}
    </Stack>
  );
}

/** /api-reference: the API as the OpenAPI document describes it, searchable, grouped by area. */
export default function ApiReferencePage() {
  const { t } = useTranslation();
  const doc = useQuery({ queryKey: ['openapi'], queryFn: () => api.get<Doc>('/openapi.json'), staleTime: Infinity });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim().toLowerCase(), 200);
  const [opened, setOpened] = useState<string[]>([]);
  const groups = useMemo(() => {
    const byTag = new Map<string, { method: string; path: string; op: Operation }[]>();
    for (const [path, methods] of Object.entries(doc.data?.paths ?? {})) {
      for (const [method, op] of Object.entries(methods)) {
        if (term && !`${method} ${path}`.toLowerCase().includes(term)) continue;
        const tag = op.tags[0] ?? '';
        byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, op }]);
      }
    }
    return [...byTag.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [doc.data, term]);
  const count = groups.reduce((n, [, ops]) => n + ops.length, 0);
  return (
    <Stack gap="md">
      <PageHeader
        title={t('account.api_reference.title')}
        subtitle={t('account.api_reference.subtitle')}
        actions={
          <Anchor href={`${API}/openapi.json`} target="_blank" rel="noopener" size="sm" data-testid="openapi-download">
            <Group gap={4} wrap="nowrap">
              <IconDownload size={16} />
              {t('account.api_reference.download')}
            </Group>
          </Anchor>
        }
      />
      <Paper withBorder radius="lg" p="md">
        <Stack gap="xs">
          <Text size="sm">{t('account.api_reference.auth')}</Text>
          <Code block fz="xs" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
            {`curl -H "Authorization: Bearer vdi_…" ${window.location.origin}${API}/user`}
          </Code>
        </Stack>
      </Paper>
      <TextInput
        leftSection={<IconSearch size={16} />}
        placeholder={t('account.api_reference.search')}
        aria-label={t('account.api_reference.search')}
        value={search}
        onChange={(e) => setSearch(e.currentTarget.value)}
        data-testid="api-search"
      />
      {doc.isPending && <Skeleton h={240} radius="lg" />}
      {!doc.isPending && count === 0 && <EmptyState icon={<IconSearch size={28} />} title={t('account.api_reference.none')} body={t('account.api_reference.none_body')} />}
      {groups.map(([tag, ops]) => (
        <div key={tag} data-testid="api-group">
          <Group gap="xs" mb={6}>
            <Title order={2} size="h5">
              {tag}
            </Title>
            <Badge variant="light" color="gray" size="sm">
              {ops.length}
            </Badge>
          </Group>
          <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
            <Accordion multiple value={opened} onChange={setOpened} chevronPosition="right" variant="default">
              {ops.map(({ method, path, op }) => {
                const key = `${method} ${path}`;
                return (
                  <Accordion.Item key={key} value={key} data-testid="api-operation" data-key={key}>
                    <Accordion.Control>
                      <Group gap="sm" wrap="nowrap">
                        <Badge w={76} variant="filled" radius="sm" color={METHOD_COLOR[method] ?? 'gray'} style={{ flexShrink: 0 }}>
                          {method.toUpperCase()}
                        </Badge>
                        <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
                          {path}
                        </Text>
                        {op.security && (
                          <Tooltip label={t('account.api_reference.signed_in')}>
                            <IconLock size={14} style={{ flexShrink: 0, opacity: 0.6 }} aria-label={t('account.api_reference.signed_in')} />
                          </Tooltip>
                        )}
                      </Group>
                    </Accordion.Control>
                    <Accordion.Panel>{opened.includes(key) && <OperationDetails op={op} />}</Accordion.Panel>
                  </Accordion.Item>
                );
              })}
            </Accordion>
          </Paper>
        </div>
      ))}
    </Stack>
  );
}
