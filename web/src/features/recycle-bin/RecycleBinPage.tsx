import type { ReactNode } from 'react';
import { Anchor, Badge, Button, Card, Group, Paper, SimpleGrid, Skeleton, Stack, Table, Text, ThemeIcon, Title } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { IconArrowBackUp, IconArrowLeft, IconDatabase, IconDeviceDesktop, IconRecycle, IconSearch, IconTemplate, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TRecycleBinDetail, TRecycleBinDomain } from '@vdi/contracts';
import { EmptyState } from '../../components/EmptyState';
import { isGone } from '../../lib/api';
import { formatEpoch, formatGb } from '../../entities/format';
import { useBinActions } from './actions';
import { entryQuery, useRecycleBinLive } from './api';
import { itemTypeKey } from './logic';
import { sizeText, TYPE_ICON } from './RecycleBinsPage';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

const STATUS_COLOR: Record<string, string> = { recycled: 'blue', restored: 'teal', deleting: 'orange', deleted: 'red' };

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm">{children || '—'}</Text>
    </div>
  );
}

function Section({ title, icon, children, testId }: { title: string; icon: ReactNode; children: ReactNode; testId: string }) {
  return (
    <Paper withBorder radius="lg" p="lg" data-testid={testId}>
      <Group gap="xs" mb="sm">
        <ThemeIcon variant="light" size={28} radius="md" color="gray">
          {icon}
        </ThemeIcon>
        <Title order={2} size="h5">
          {title}
        </Title>
      </Group>
      {children}
    </Paper>
  );
}

function DomainTable({ rows }: { rows: TRecycleBinDomain[] }) {
  const { t } = useTranslation();
  return (
    <CardTable minWidth={640} verticalSpacing="xs" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('recycle_bin.detail.name')}</Table.Th>
            <Table.Th>{t('recycle_bin.detail.user')}</Table.Th>
            <Table.Th>{t('recycle_bin.detail.group')}</Table.Th>
            <Table.Th>{t('recycle_bin.detail.category')}</Table.Th>
            <Table.Th>{t('recycle_bin.detail.accessed')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((d) => (
            <Table.Tr key={d.id} data-testid="bin-detail-domain">
              <Table.Td>
                <Text size="sm" fw={600}>
                  {builtInText(t, d.name)}
                </Text>
                <Text size="xs" c="dimmed" lineClamp={1}>
                  {builtInText(t, d.description) || t('desktops.no_description')}
                </Text>
              </Table.Td>
              <Table.Td data-label={t('recycle_bin.detail.user')}>{d.username}</Table.Td>
              <Table.Td data-label={t('recycle_bin.detail.group')}>{builtInText(t, d.group.name)}</Table.Td>
              <Table.Td data-label={t('recycle_bin.detail.category')}>{builtInText(t, d.category.name)}</Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('recycle_bin.detail.accessed')}>
                {formatEpoch(d.accessed) ?? '—'}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
    </CardTable>
  );
}

function Detail({ entry }: { entry: TRecycleBinDetail }) {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const actions = useBinActions({ afterRestore: () => navigate('/recycleBins'), afterDelete: () => navigate('/recycleBins') });
  const Icon = TYPE_ICON[entry.item_type] ?? IconRecycle;
  const inBin = entry.status === 'recycled';
  return (
    <Stack gap="lg">
      <Group justify="space-between" align="flex-end" wrap="wrap" gap="md">
        <Group gap="md" wrap="nowrap">
          <ThemeIcon variant="light" size={48} radius="md" color="gray">
            <Icon size={26} />
          </ThemeIcon>
          <div>
            <Group gap="xs">
              <Title order={1} size="h2" data-testid="bin-detail-name">
                {builtInText(t, entry.item_name)}
              </Title>
              <Badge color={STATUS_COLOR[entry.status] ?? 'gray'} variant="light" data-testid="bin-detail-status">
                {t(`recycle_bin.statuses.${entry.status}`, { defaultValue: entry.status })}
              </Badge>
            </Group>
            <Text size="sm" c="dimmed">
              {t(itemTypeKey(entry.item_type))}
            </Text>
          </div>
        </Group>
        {inBin && (
          <Group gap="sm">
            <Button color="teal" leftSection={<IconArrowBackUp size={16} />} loading={actions.restoring(entry.id)} disabled={actions.busy(entry.id)} onClick={() => actions.restore(entry)} data-testid="bin-detail-restore">
              {t('recycle_bin.actions.restore')}
            </Button>
            <Button color="red" variant="light" leftSection={<IconTrash size={16} />} loading={actions.deleting(entry.id)} disabled={actions.busy(entry.id)} onClick={() => actions.remove(entry)} data-testid="bin-detail-delete">
              {t('recycle_bin.actions.delete')}
            </Button>
          </Group>
        )}
      </Group>

      <Card withBorder radius="lg" padding="lg">
        <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="md">
          <Field label={t('recycle_bin.detail.deleted_by')}>{entry.agent_name}</Field>
          <Field label={t('recycle_bin.detail.deleted_at')}>{formatEpoch(entry.accessed)}</Field>
          <Field label={t('recycle_bin.detail.owner')}>{entry.owner_name}</Field>
          <Field label={t('recycle_bin.detail.group')}>{builtInText(t, entry.owner_group_name)}</Field>
          <Field label={t('recycle_bin.detail.size')}>{t('storage.gb', { value: sizeText(entry.size, i18n.language) })}</Field>
          <Field label={t('recycle_bin.detail.expires')}>{entry.expires ? formatEpoch(entry.expires) : null}</Field>
        </SimpleGrid>
      </Card>

      {entry.desktops.length > 0 && (
        <Section title={t('recycle_bin.counts.desktops', { count: entry.desktops.length })} icon={<IconDeviceDesktop size={16} />} testId="bin-detail-desktops">
          <DomainTable rows={entry.desktops} />
        </Section>
      )}
      {entry.templates.length > 0 && (
        <Section title={t('recycle_bin.counts.templates', { count: entry.templates.length })} icon={<IconTemplate size={16} />} testId="bin-detail-templates">
          <DomainTable rows={entry.templates} />
        </Section>
      )}
      {entry.deployments.length > 0 && (
        <Section title={t('recycle_bin.counts.deployments', { count: entry.deployments.length })} icon={<IconDeviceDesktop size={16} />} testId="bin-detail-deployments">
          <Stack gap={4}>
            {entry.deployments.map((d, i) => (
              <Text key={i} size="sm">
                {String((d as { name?: unknown }).name ?? (d as { id?: unknown }).id ?? '')}
              </Text>
            ))}
          </Stack>
        </Section>
      )}
      <Section title={t('recycle_bin.counts.storages', { count: entry.storages.length })} icon={<IconDatabase size={16} />} testId="bin-detail-storages">
        {entry.storages.length === 0 ? (
          <Text size="sm" c="dimmed">
            {t('recycle_bin.detail.no_storages')}
          </Text>
        ) : (
          <CardTable minWidth={640} verticalSpacing="xs" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('recycle_bin.detail.disk')}</Table.Th>
                  <Table.Th>{t('recycle_bin.detail.directory')}</Table.Th>
                  <Table.Th>{t('recycle_bin.detail.used_by')}</Table.Th>
                  <Table.Th>{t('storage.columns.size')}</Table.Th>
                  <Table.Th>{t('recycle_bin.detail.status')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {entry.storages.map((s) => (
                  <Table.Tr key={s.id} data-testid="bin-detail-storage">
                    <Table.Td>
                      <Text size="sm" ff="monospace">
                        {s.id.slice(0, 8)}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {s.format} · {t(`recycle_bin.disk_types.${s.type}`, { defaultValue: s.type })}
                      </Text>
                    </Table.Td>
                    <Table.Td data-label={t('recycle_bin.detail.directory')}>
                      <Text size="sm" ff="monospace">
                        {s.directory_path}
                      </Text>
                    </Table.Td>
                    <Table.Td data-label={t('recycle_bin.detail.used_by')}>{s.domains.map((name) => builtInText(t, name)).join(', ') || '—'}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('storage.columns.size')}>
                      {t('storage.used_of_total', { used: formatGb(s['qemu-img-info']['actual-size'], i18n.language), total: formatGb(s['qemu-img-info']['virtual-size'], i18n.language) })}
                    </Table.Td>
                    <Table.Td data-label={t('recycle_bin.detail.status')}>
                      <Badge variant="light" color="gray" size="sm">
                        {t(`recycle_bin.disk_statuses.${s.status}`, { defaultValue: s.status })}
                      </Badge>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </CardTable>
        )}
      </Section>
    </Stack>
  );
}

export default function RecycleBinPage() {
  const { t } = useTranslation();
  const { id = '' } = useParams();
  // Gone or not reachable: the page says so itself; other failures go to the central handler.
  const { data: entry, isLoading, error } = useQuery({ ...entryQuery(id), meta: { handlesError: isGone } });
  useRecycleBinLive();
  const notFound = isGone(error);

  return (
    <>
      <Anchor component={Link} to="/recycleBins" size="sm" mb="md" display="inline-flex" style={{ alignItems: 'center', gap: 6 }} data-testid="bin-back">
        <IconArrowLeft size={14} />
        {t('recycle_bin.back')}
      </Anchor>
      {isLoading ? (
        <Stack gap="lg" data-testid="bin-detail-loading">
          <Skeleton h={48} w="50%" />
          <Skeleton h={90} />
          <Skeleton h={160} />
        </Stack>
      ) : entry ? (
        <Detail entry={entry} />
      ) : (
        <EmptyState
          icon={<IconSearch size={30} />}
          title={t('recycle_bin.not_found_title')}
          body={t('recycle_bin.not_found_body')}
          action={
            <Button component={Link} to="/recycleBins" variant="default">
              {t('recycle_bin.back')}
            </Button>
          }
        />
      )}
    </>
  );
}
