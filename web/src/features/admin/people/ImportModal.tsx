import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Badge, Button, Code, FileButton, Group, Modal, Progress, Stack, Table, Text, Textarea } from '@mantine/core';
import { ScrollBox } from '../../../components/ScrollBox';
import { IconAlertTriangle, IconCircleCheck, IconFileUpload } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { USER_CSV_HEADER, type TAdminImportAnswer, type TAdminImportJob } from '@vdi/contracts';
import { useAction } from '../../../lib/use-action';
import { queryClient } from '../../../lib/queries';
import { useAdminEvent } from '../system/live';
import { cancelImport, checkImport, importJobQuery, refreshPeople, startImport } from './api';
import { fullBadge, useCodeText } from '../shared/console';
import '../../../i18n/areas/admin';

const ENDED: TAdminImportJob['status'][] = ['done', 'failed', 'aborted'];

/**
 * CSV import in two steps: a dry run lists every bad row with its reasons and writes nothing; then
 * the import runs as a job (in the console's jobs too): its progress shows here, live, with a cancel
 * (the users created before it stay), and at its end the rows that were not created, with reasons.
 */
export function ImportModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const [csv, setCsv] = useState('');
  const [preview, setPreview] = useState<TAdminImportAnswer | null>(null);
  const [jobId, setJobId] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (opened) {
      setCsv('');
      setPreview(null);
      setJobId(null);
      setError(null);
    }
  }, [opened, setError]);
  // The job's counts: read while it runs (live events make it sooner), then its rows once it ends.
  const job = useQuery({
    ...importJobQuery(jobId ?? ''),
    enabled: jobId !== null,
    refetchInterval: (q) => (q.state.data && ENDED.includes(q.state.data.status) ? false : 2000),
  }).data;
  useAdminEvent('user_import', (e) => {
    if (e.id === jobId) void queryClient.invalidateQueries({ queryKey: importJobQuery(e.id).queryKey });
  });
  const ended = job !== undefined && ENDED.includes(job.status);
  useEffect(() => {
    if (ended) void refreshPeople();
  }, [ended]);

  const check = () => run(async () => {
    setPreview(await checkImport(csv));
  });
  const doImport = () => run(async () => {
    const started = await startImport(csv);
    queryClient.setQueryData(importJobQuery(started.id).queryKey, started);
    setJobId(started.id);
    setPreview(null);
  });
  const cancel = () => run(async () => {
    if (jobId) await cancelImport(jobId);
    await queryClient.invalidateQueries({ queryKey: importJobQuery(jobId ?? '').queryKey });
  });
  const result = ended ? job : undefined;
  const bad = (result ? result.rows : preview?.rows.filter((r) => r.status === 'error')) ?? [];
  const running = jobId !== null && !ended;

  return (
    <Modal opened={opened} onClose={onClose} title={t('admin.import.title')} size="xl" centered>
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {t('admin.import.intro')} <Code>{USER_CSV_HEADER.join(',')}</Code>
        </Text>
        {jobId === null && (
          <>
            <Group>
              <FileButton onChange={(f) => void f?.text().then((text) => { setCsv(text); setPreview(null); })} accept=".csv,text/csv">
                {(props) => (
                  <Button variant="light" leftSection={<IconFileUpload size={16} />} {...props} data-testid="import-file">
                    {t('admin.import.choose_file')}
                  </Button>
                )}
              </FileButton>
            </Group>
            <Textarea
              label={t('admin.import.content')}
              value={csv}
              onChange={(e) => {
                setCsv(e.currentTarget.value);
                setPreview(null);
              }}
              autosize
              minRows={4}
              maxRows={10}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
              data-testid="import-text"
            />
          </>
        )}
        {error && (
          <Alert color="red" icon={<IconAlertTriangle size={16} />} role="alert" data-testid="import-error">
            {error}
          </Alert>
        )}
        {preview && (
          <Alert
            color={preview.invalid ? 'yellow' : 'teal'}
            icon={preview.invalid ? <IconAlertTriangle size={16} /> : <IconCircleCheck size={16} />}
            data-testid="import-preview"
            data-valid={preview.valid}
            data-invalid={preview.invalid}
          >
            {t('admin.import.checked', { valid: preview.valid, total: preview.total, invalid: preview.invalid })}
          </Alert>
        )}
        {running && job && (
          <Stack gap={6} data-testid="import-progress" data-created={job.created} data-done={job.done}>
            <Progress value={job.progress} animated aria-label={`${Math.round(job.progress)} %`} />
            <Text size="sm">{t('admin.import.running', { done: job.done, total: job.total, created: job.created })}</Text>
          </Stack>
        )}
        {result && (
          <Alert
            color={result.status === 'done' ? 'teal' : 'yellow'}
            icon={result.status === 'done' ? <IconCircleCheck size={16} /> : <IconAlertTriangle size={16} />}
            data-testid="import-result"
            data-status={result.status}
            data-created={result.created}
            data-failed={result.failed}
          >
            {result.status === 'done'
              ? t('admin.import.created', { created: result.created, total: result.total, invalid: result.failed })
              : result.status === 'aborted'
                ? t('admin.import.cancelled', { created: result.created, total: result.total })
                : t('admin.import.stopped', { created: result.created, total: result.total })}
          </Alert>
        )}
        {bad.length > 0 && (
          <ScrollBox mah={260} label={preview ? t('admin.import.checked', { valid: preview.valid, total: preview.total, invalid: preview.invalid }) : t('admin.import.title')}>
            <Table striped withTableBorder fz="sm" data-testid="import-bad-rows">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('admin.import.line')}</Table.Th>
                  <Table.Th>{t('admin.users.username')}</Table.Th>
                  <Table.Th>{t('admin.import.reason')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {bad.map((r) => (
                  <Table.Tr key={r.line} data-testid="import-bad-row" data-line={r.line}>
                    <Table.Td>{r.line}</Table.Td>
                    <Table.Td>{r.username || '—'}</Table.Td>
                    <Table.Td>
                      <Stack gap={2}>
                        {r.errors.map((e, i) => (
                          <Group key={i} gap={6} wrap="nowrap">
                            <Badge styles={fullBadge} size="xs" color="red" variant="light">
                              {e.code}
                            </Badge>
                            <Text size="xs">{codeText(e.code, e.params)}</Text>
                          </Group>
                        ))}
                      </Stack>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollBox>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose} data-testid="import-close">
            {t(result ? 'common.close' : running ? 'admin.import.hide' : 'common.cancel')}
          </Button>
          {jobId === null && (
            <Button variant="light" onClick={() => void check()} loading={busy && !preview} disabled={!csv.trim()} data-testid="import-check">
              {t('admin.import.check')}
            </Button>
          )}
          {preview && preview.valid > 0 && (
            <Button onClick={() => void doImport()} loading={busy} data-testid="import-run">
              {t('admin.import.run', { count: preview.valid })}
            </Button>
          )}
          {running && (
            <Button color="red" variant="light" onClick={() => void cancel()} loading={busy} data-testid="import-cancel">
              {t('admin.import.stop')}
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
