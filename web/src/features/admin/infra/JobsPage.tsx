import { useState } from 'react';
import { Alert, Badge, Group, Pagination, Paper, Progress, ScrollArea, Select, SimpleGrid, Skeleton, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue, useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconLoader, IconSearch, IconX } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { ADMIN_JOB_KINDS, type TAdminJob } from '@vdi/contracts';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { notifySuccess } from '../../../lib/error-handler';
import { errorMessage } from '../../../lib/errors';
import { ConfirmModal, RowAction, fullBadge } from '../shared/console';
import { cancelJob, jobsQuery } from './api';
import '../../../i18n/areas/admin-infra';
import { builtInText } from '../../../lib/built-in-text';
import { formatBytes } from '../../../entities/format';

const PER_PAGE = 25;
const STATUS_COLOR: Record<TAdminJob['status'], string> = { queued: 'gray', running: 'blue', done: 'teal', failed: 'red', aborted: 'orange' };
const active = (j: TAdminJob) => j.status === 'queued' || j.status === 'running';

function useJobTexts() {
  const { t } = useTranslation();
  return {
    kind: (k: string) => t(`admin_infra.jobs.kinds.${k}`, { defaultValue: k }),
    status: (s: string) => t(`admin_infra.jobs.statuses.${s}`, { defaultValue: s }),
  };
}

/** A job's progress bar, and for work counted in bytes (a template copied to a hypervisor) how much is done. */
export function JobProgress({ j }: { j: TAdminJob }) {
  const { t, i18n } = useTranslation();
  const bar = (
    <Group gap="xs" wrap="nowrap" miw={120}>
      <Progress value={j.progress} size="sm" style={{ flex: 1 }} color={STATUS_COLOR[j.status]} animated={j.status === 'running'} aria-label={`${j.progress} %`} />
      <Text size="xs" c="dimmed" w={34} ta="right">
        {j.progress} %
      </Text>
    </Group>
  );
  if (!j.bytes) return bar;
  // Work counted in bytes (a template copied to a hypervisor): how much of it is done.
  return (
    <Stack gap={2}>
      {bar}
      <Text size="xs" c="dimmed" data-testid="job-bytes">
        {t('admin_infra.jobs.bytes', { done: formatBytes(j.bytes.done, i18n.language), total: formatBytes(j.bytes.total, i18n.language) })}
      </Text>
    </Stack>
  );
}

function CancelModal({ job, onClose }: { job: TAdminJob | null; onClose: () => void }) {
  const { t } = useTranslation();
  const texts = useJobTexts();
  const cancel = async () => {
    await cancelJob(job!.id);
    notifySuccess(t('admin_infra.jobs.cancelled'));
  };
  return (
    <ConfirmModal
      opened={job !== null}
      onClose={onClose}
      title={t('admin_infra.jobs.cancel_title')}
      cancelLabel={t('admin_infra.keep_going')}
      confirmLabel={t('admin_infra.jobs.cancel')}
      onConfirm={cancel}
      testId="job-cancel"
      modalTestId={null}
    >
      {job && <Text size="sm">{t('admin_infra.jobs.cancel_body', { kind: texts.kind(job.kind), target: builtInText(t, job.target_name) ?? job.target_id })}</Text>}
    </ConfirmModal>
  );
}

/** Jobs: running and recent long work with progress and who started it; cancel stops it and undoes it. */
export default function JobsPage() {
  const { t, i18n } = useTranslation();
  const texts = useJobTexts();
  const [state, setState] = useState<string | null>('active');
  const [kind, setKind] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 300);
  const [page, setPage] = useState(1);
  const [cancelling, setCancelling] = useState<TAdminJob | null>(null);
  const list = useQuery(jobsQuery({ page, per_page: PER_PAGE, state, kind, search: debounced.trim() }));
  const narrow = useMediaQuery('(max-width: 48em)');
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / PER_PAGE));
  const filtered = state !== null || kind !== null || debounced.trim() !== '';

  const cancelButton = (j: TAdminJob) =>
    active(j) ? <RowAction label={t('admin_infra.jobs.cancel')} icon={<IconX size={16} />} color="red" onClick={() => setCancelling(j)} testId={`job-cancel-${j.id}`} /> : null;

  return (
    <>
      <PageHeader title={t('admin_infra.jobs.heading')} subtitle={t('admin_infra.jobs.subheading')} />
      <Paper withBorder radius="md" p="md" mb="md">
        <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
          <TextInput label={t('admin_infra.search')} leftSection={<IconSearch size={14} />} value={search} onChange={(e) => { setSearch(e.currentTarget.value); setPage(1); }} data-testid="jobs-search" />
          <Select
            label={t('admin_infra.jobs.state')}
            data={[
              { value: 'active', label: t('admin_infra.jobs.states.active') },
              { value: 'finished', label: t('admin_infra.jobs.states.finished') },
            ]}
            placeholder={t('admin_infra.any')}
            value={state}
            onChange={(v) => { setState(v); setPage(1); }}
            clearable
            data-testid="jobs-state"
          />
          <Select
            label={t('admin_infra.jobs.kind')}
            data={ADMIN_JOB_KINDS.map((k) => ({ value: k, label: texts.kind(k) }))}
            placeholder={t('admin_infra.any')}
            value={kind}
            onChange={(v) => { setKind(v); setPage(1); }}
            clearable
            data-testid="jobs-kind"
          />
        </SimpleGrid>
        <Text size="sm" c="dimmed" mt="sm" data-testid="jobs-total">
          {list.data ? t('admin_infra.jobs.total', { count: list.data.total }) : ' '}
        </Text>
      </Paper>
      {list.error && !list.data ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_infra.load_failed')} data-testid="jobs-error">
          {errorMessage(t, list.error, (k) => i18n.exists(k))}
        </Alert>
      ) : list.isPending || !list.data ? (
        <Skeleton height={240} radius="md" />
      ) : list.data.items.length === 0 ? (
        <EmptyState
          icon={<IconLoader size={28} />}
          title={t(state === 'active' && !kind && !debounced.trim() ? 'admin_infra.jobs.empty_active' : filtered ? 'admin_infra.no_match' : 'admin_infra.jobs.empty_title')}
          body={t('admin_infra.jobs.empty_body')}
        />
      ) : (
        <Stack gap="md">
          {narrow ? (
            <Stack gap="xs">
              {list.data.items.map((j) => (
                <Paper key={j.id} withBorder radius="md" p="sm" data-testid="job-row" data-kind={j.kind} data-status={j.status}>
                  <Group justify="space-between" wrap="nowrap" gap="xs">
                    <Badge variant="light" color={STATUS_COLOR[j.status]} styles={fullBadge}>
                      {texts.status(j.status)}
                    </Badge>
                    {cancelButton(j)}
                  </Group>
                  <Text fw={600} size="sm" mt={6}>
                    {texts.kind(j.kind)} · {builtInText(t, j.target_name) ?? j.target_id}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {j.user_name} · {dayjs(j.created).format('YYYY-MM-DD HH:mm')}
                  </Text>
                  <JobProgress j={j} />
                  {j.error && j.status !== 'aborted' && (
                    <Text size="xs" c="red">
                      {j.error}
                    </Text>
                  )}
                </Paper>
              ))}
            </Stack>
          ) : (
            <Paper withBorder radius="md">
              <ScrollArea type="auto">
                <Table striped highlightOnHover verticalSpacing="xs" miw={820} data-testid="jobs-table">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('admin_infra.jobs.columns.kind')}</Table.Th>
                      <Table.Th>{t('admin_infra.jobs.columns.target')}</Table.Th>
                      <Table.Th>{t('admin_infra.jobs.columns.initiator')}</Table.Th>
                      <Table.Th>{t('admin_infra.jobs.columns.progress')}</Table.Th>
                      <Table.Th>{t('admin_infra.jobs.columns.status')}</Table.Th>
                      <Table.Th>{t('admin_infra.jobs.columns.started')}</Table.Th>
                      <Table.Th />
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {list.data.items.map((j) => (
                      <Table.Tr key={j.id} data-testid="job-row" data-kind={j.kind} data-status={j.status}>
                        <Table.Td>{texts.kind(j.kind)}</Table.Td>
                        <Table.Td>
                          <Text size="sm">{builtInText(t, j.target_name) ?? '—'}</Text>
                          {j.error && j.status === 'failed' && (
                            <Text size="xs" c="red">
                              {j.error}
                            </Text>
                          )}
                        </Table.Td>
                        <Table.Td>{j.user_name}</Table.Td>
                        <Table.Td>
                          <JobProgress j={j} />
                        </Table.Td>
                        <Table.Td>
                          <Badge variant="light" color={STATUS_COLOR[j.status]} styles={fullBadge}>
                            {texts.status(j.status)}
                          </Badge>
                        </Table.Td>
                        <Table.Td style={{ whiteSpace: 'nowrap' }}>{dayjs(j.created).format('YYYY-MM-DD HH:mm')}</Table.Td>
                        <Table.Td>{cancelButton(j)}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollArea>
            </Paper>
          )}
          {pages > 1 && (
            <Group justify="center">
              <Pagination total={pages} value={page} onChange={setPage} size="sm" />
            </Group>
          )}
        </Stack>
      )}
      <CancelModal job={cancelling} onClose={() => setCancelling(null)} />
    </>
  );
}
