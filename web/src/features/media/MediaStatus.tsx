import { Badge, Group, Loader, Progress, Stack, Text, Tooltip } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { TMedia } from '@vdi/contracts';
import { statusLook } from './logic';
import { formatBytes, formatDuration } from '../../entities/format';
import '../../i18n/areas/content';

/** The media's status, coloured; a spinner while something happens to it. */
export function MediaStatusBadge({ status, size = 'md' }: { status: string; size?: 'sm' | 'md' }) {
  const { t } = useTranslation();
  const look = statusLook(status);
  return (
    <Badge
      color={look.color}
      variant="light"
      size={size}
      radius="sm"
      leftSection={look.busy ? <Loader size={10} color={look.color} /> : null}
      data-testid="media-status"
      data-status={status}
      style={{ flex: '0 0 auto', maxWidth: 'none' }}
      styles={{ label: { overflow: 'visible' } }}
    >
      {t(`media.status.${status}`, { defaultValue: status })}
    </Badge>
  );
}

/** Percent, received of total, average throughput and time left while it downloads. */
export function DownloadProgress({ m }: { m: TMedia }) {
  const { t, i18n } = useTranslation();
  const p = m.progress;
  const lang = i18n.language;
  const known = Boolean(p && p.total_bytes > 0);
  const percent = p ? p.total_percent : 0;
  return (
    <Stack gap={4} w="100%" maw={320} data-testid="media-progress" data-percent={percent}>
      <Progress
        value={known ? Math.max(percent, 2) : 100}
        striped
        animated
        size="lg"
        radius="xl"
        color={m.status === 'DownloadAborting' ? 'orange' : 'indigo'}
        aria-label={t('media.progress.label', { name: m.name })}
      />
      <Group justify="space-between" gap="xs" wrap="nowrap">
        <Text size="xs" fw={600} data-testid="media-percent">
          {known ? new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 1 }).format(percent / 100) : t('media.progress.starting')}
        </Text>
        {p && p.received_bytes > 0 && (
          <Text size="xs" c="dimmed" data-testid="media-throughput">
            {t('media.progress.speed', { speed: formatBytes(p.speed_bytes_per_second, lang) })}
            {p.time_left_seconds !== null && ` · ${t('media.progress.left', { time: formatDuration(p.time_left_seconds) })}`}
          </Text>
        )}
      </Group>
      {p && p.received_bytes > 0 && (
        <Text size="xs" c="dimmed">
          {known
            ? t('media.progress.received_of', { received: formatBytes(p.received_bytes, lang), total: formatBytes(p.total_bytes, lang) })
            : t('media.progress.received', { received: formatBytes(p.received_bytes, lang) })}
        </Text>
      )}
    </Stack>
  );
}

/** Why the last download failed, in words. */
export function FailureDetail({ m }: { m: TMedia }) {
  const { t } = useTranslation();
  if (!m.detail || statusLook(m.status).tone !== 'failed') return null;
  const text = t(`media.failure.${m.detail}`, { defaultValue: t('media.failure.download_failed') });
  return (
    <Tooltip label={text} multiline w={280} withArrow>
      <Text size="xs" c="red" lineClamp={2} maw={320} data-testid="media-failure">
        {text}
      </Text>
    </Tooltip>
  );
}
