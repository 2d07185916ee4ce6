import { Alert, Button, Checkbox, Group, Paper, Progress, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconArchive, IconDownload, IconPlayerPlay } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { formatBytes } from '../../../entities/format';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { backupsQuery, downloadBackup, startBackup } from './api';
import '../../../i18n/areas/admin-system';

const when = (iso: string) => dayjs(iso).format('YYYY-MM-DD HH:mm');

/** Backups of the installation (`/isard-admin/backups`): the last one's time, making one with its progress, the ones kept. */
export default function BackupsPage() {
  const { t, i18n } = useTranslation();
  const list = useQuery(backupsQuery());
  const [disks, setDisks] = useState(false);
  const starting = useAction();
  const downloading = useAction();
  const job = list.data?.job ?? null;
  const busy = job !== null && (job.status === 'queued' || job.status === 'running');

  return (
    <>
      <PageHeader title={t('admin_system.backups.heading')} subtitle={t('admin_system.backups.subheading')} />
      {list.error ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_system.load_failed')} data-testid="backups-load-error">
          {errorMessage(t, list.error, (k) => i18n.exists(k))}
        </Alert>
      ) : list.isPending ? (
        <Skeleton height={200} radius="md" />
      ) : (
        <Stack gap="md">
          <Paper withBorder radius="md" p="lg" data-testid="backup-card">
            <Stack gap="md">
              <div>
                <Title order={2} size="h4">
                  {t('admin_system.backups.last_title')}
                </Title>
                <Text size="sm" mt={4} data-testid="backup-last">
                  {list.data.last ? t('admin_system.backups.last', { when: when(list.data.last.created) }) : t('admin_system.backups.never')}
                </Text>
              </div>
              <Checkbox
                label={t('admin_system.backups.disks')}
                description={t('admin_system.backups.disks_hint')}
                checked={disks}
                onChange={(e) => setDisks(e.currentTarget.checked)}
                disabled={busy}
                data-testid="backup-disks"
              />
              {busy && job && (
                <Stack gap={4} data-testid="backup-progress">
                  <Text size="sm">{t('admin_system.backups.running', { percent: job.progress })}</Text>
                  <Progress value={job.progress} animated aria-label={t('admin_system.backups.running', { percent: job.progress })} />
                </Stack>
              )}
              {job?.status === 'failed' && (
                <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_system.backups.failed')} data-testid="backup-failed">
                  {job.error}
                </Alert>
              )}
              {starting.error && (
                <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">
                  {starting.error}
                </Alert>
              )}
              <Group>
                <Button leftSection={<IconPlayerPlay size={16} />} loading={starting.busy || busy} onClick={() => starting.run(() => startBackup(disks))} data-testid="backup-start">
                  {t('admin_system.backups.start')}
                </Button>
              </Group>
              <Text size="xs" c="dimmed">
                {t('admin_system.backups.command_hint')}
              </Text>
            </Stack>
          </Paper>
          {downloading.error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert">
              {downloading.error}
            </Alert>
          )}
          {list.data.items.length === 0 ? (
            <EmptyState icon={<IconArchive size={28} />} title={t('admin_system.backups.empty_title')} body={t('admin_system.backups.empty_body')} />
          ) : (
            <Paper withBorder radius="md" p="md" data-testid="backup-list">
              <Title order={2} size="h4" mb="sm">
                {t('admin_system.backups.kept')}
              </Title>
              <Stack gap="xs">
                {list.data.items.map((b) => (
                  <Group key={b.name} justify="space-between" wrap="wrap" gap="xs" data-testid="backup-row">
                    <div style={{ minWidth: 0 }}>
                      <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere' }}>
                        {when(b.created)}
                      </Text>
                      <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                        {b.name} · {formatBytes(b.size, i18n.language)}
                      </Text>
                    </div>
                    <Button
                      variant="default"
                      size="xs"
                      leftSection={<IconDownload size={14} />}
                      onClick={() => downloading.run(() => downloadBackup(b.name))}
                      aria-label={t('admin_system.backups.download_named', { name: b.name })}
                    >
                      {t('admin_system.backups.download')}
                    </Button>
                  </Group>
                ))}
              </Stack>
            </Paper>
          )}
        </Stack>
      )}
    </>
  );
}
