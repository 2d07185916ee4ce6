import { useCallback, useEffect, useRef, useState } from 'react';
import { ActionIcon, Alert, Button, FileButton, Group, Loader, Paper, Progress, Stack, Text, Tooltip } from '@mantine/core';
import { IconAlertTriangle, IconCheck, IconDownload, IconFile, IconFileUpload, IconInfoCircle, IconRefresh } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TGuestFolder } from '@vdi/contracts';
import { errorMessage } from '../../../lib/errors';
import { session } from '../../../lib/session';
import { fetchGuestFile, listGuestFiles, sendGuestFile, sizeLabel } from './files-api';
import '../../../i18n/areas/viewer-toolbar';

// Files to and from the desktop (both viewers, VNC and RDP): through the desktop's guest agent, in one
// folder of the desktop. Send (choose or drop a file, a progress bar), the folder's files with their
// sizes and a fetch button each (a download), the reason when the desktop cannot (no agent, not running).

type Sending = { name: string; share: number } | null;
type Notice = { color: 'teal' | 'red'; text: string } | null;

export function FilesPanel({ desktopId }: { desktopId?: string }) {
  const { t, i18n } = useTranslation();
  const signedIn = Boolean(session.token());
  const [folder, setFolder] = useState<TGuestFolder | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [sending, setSending] = useState<Sending>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [fetching, setFetching] = useState<string | null>(null);
  const [over, setOver] = useState(false);
  const live = useRef(true);
  const exists = useCallback((k: string) => i18n.exists(k), [i18n]);

  const load = useCallback(async () => {
    if (!desktopId || !signedIn) return;
    setLoading(true);
    try {
      const f = await listGuestFiles(desktopId);
      if (!live.current) return;
      setFolder(f);
      setLoadError(null);
    } catch (err) {
      if (live.current) setLoadError(errorMessage(t, err, exists));
    } finally {
      if (live.current) setLoading(false);
    }
  }, [desktopId, signedIn, t, exists]);

  useEffect(() => {
    live.current = true;
    void load();
    return () => {
      live.current = false;
    };
  }, [load]);

  const send = async (file: File | null) => {
    if (!file || !desktopId || sending) return;
    setNotice(null);
    if (folder && file.size > folder.max_upload_bytes) {
      setNotice({ color: 'red', text: t('viewer_toolbar.file_too_large', { name: file.name, size: sizeLabel(folder.max_upload_bytes, i18n.language) }) });
      return;
    }
    setSending({ name: file.name, share: 0 });
    try {
      await sendGuestFile(desktopId, file, (share) => live.current && setSending({ name: file.name, share }));
      if (!live.current) return;
      setNotice({ color: 'teal', text: t('viewer_toolbar.file_sent', { name: file.name }) });
      await load();
    } catch (err) {
      if (live.current) setNotice({ color: 'red', text: errorMessage(t, err, exists) });
    } finally {
      if (live.current) setSending(null);
    }
  };

  const fetchOne = async (name: string) => {
    if (!desktopId) return;
    setNotice(null);
    setFetching(name);
    try {
      await fetchGuestFile(desktopId, name);
    } catch (err) {
      if (live.current) setNotice({ color: 'red', text: errorMessage(t, err, exists) });
    } finally {
      if (live.current) setFetching(null);
    }
  };

  if (!desktopId || !signedIn) {
    return (
      <Alert color="gray" variant="light" icon={<IconInfoCircle size={18} />} data-testid="viewer-files-reason">
        {t('viewer_toolbar.files_sign_in')}
      </Alert>
    );
  }

  const ready = folder !== null && loadError === null;
  return (
    <Stack gap="md" data-testid="viewer-files-panel">
      {loadError ? (
        <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} />} data-testid="viewer-files-reason">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">{loadError}</Text>
            <Button size="xs" variant="default" leftSection={<IconRefresh size={14} />} onClick={() => void load()} loading={loading} data-testid="viewer-files-retry">
              {t('viewer_toolbar.refresh_files')}
            </Button>
          </Stack>
        </Alert>
      ) : folder ? (
        <Text size="sm" c="dimmed" data-testid="viewer-files-hint">
          {t('viewer_toolbar.files_hint', { folder: folder.folder })} {t('viewer_toolbar.max_file_size', { size: sizeLabel(folder.max_upload_bytes, i18n.language) })}
        </Text>
      ) : (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm" c="dimmed">
            {t('viewer_toolbar.files_loading')}
          </Text>
        </Group>
      )}

      <Paper
        withBorder
        radius="md"
        p="md"
        style={{ borderStyle: 'dashed', borderColor: over ? 'var(--mantine-color-indigo-5)' : undefined, opacity: ready ? 1 : 0.6 }}
        onDragOver={(e) => {
          if (!ready) return;
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (ready) void send(e.dataTransfer.files[0] ?? null);
        }}
        data-testid="viewer-files-drop"
      >
        <Stack gap="xs" align="center">
          <IconFileUpload size={28} stroke={1.5} aria-hidden />
          <Text size="sm" ta="center">
            {t('viewer_toolbar.drop_file')}
          </Text>
          <FileButton onChange={(f) => void send(f)} disabled={!ready || sending !== null} inputProps={{ 'data-testid': 'viewer-files-input' } as Record<string, string>}>
            {(props) => (
              <Button {...props} size="xs" leftSection={<IconFileUpload size={14} />} disabled={!ready || sending !== null} data-testid="viewer-files-send">
                {t('viewer_toolbar.send_file')}
              </Button>
            )}
          </FileButton>
        </Stack>
      </Paper>

      {sending && (
        <Stack gap={4} data-testid="viewer-files-progress">
          <Text size="xs">{t('viewer_toolbar.sending_file', { name: sending.name })}</Text>
          <Progress value={Math.round(sending.share * 100)} animated aria-label={t('viewer_toolbar.sending_file', { name: sending.name })} />
        </Stack>
      )}
      {notice && (
        <Alert color={notice.color} variant="light" icon={notice.color === 'teal' ? <IconCheck size={18} /> : <IconAlertTriangle size={18} />} data-testid="viewer-files-notice">
          {notice.text}
        </Alert>
      )}

      {ready && (
        <Stack gap="xs">
          <Group justify="space-between" gap="xs">
            <Text size="sm" fw={600}>
              {t('viewer_toolbar.desktop_folder')}
            </Text>
            <Tooltip label={t('viewer_toolbar.refresh_files')}>
              <ActionIcon variant="subtle" onClick={() => void load()} loading={loading} aria-label={t('viewer_toolbar.refresh_files')} data-testid="viewer-files-refresh">
                <IconRefresh size={16} />
              </ActionIcon>
            </Tooltip>
          </Group>
          {folder.files.length === 0 ? (
            <Text size="sm" c="dimmed" data-testid="viewer-files-empty">
              {t('viewer_toolbar.folder_empty')}
            </Text>
          ) : (
            <Stack gap={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="viewer-files-list">
              {folder.files.map((f) => (
                <Group key={f.name} component="li" gap="xs" wrap="nowrap" justify="space-between" data-testid="viewer-file" data-name={f.name}>
                  <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
                    <IconFile size={16} aria-hidden style={{ flexShrink: 0 }} />
                    <Text size="sm" truncate="end" title={f.name}>
                      {f.name}
                    </Text>
                  </Group>
                  <Group gap="xs" wrap="nowrap">
                    <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                      {sizeLabel(f.size, i18n.language)}
                    </Text>
                    <Tooltip label={t('viewer_toolbar.fetch_named', { name: f.name })}>
                      <ActionIcon
                        variant="light"
                        onClick={() => void fetchOne(f.name)}
                        loading={fetching === f.name}
                        aria-label={t('viewer_toolbar.fetch_named', { name: f.name })}
                        data-testid="viewer-file-fetch"
                      >
                        <IconDownload size={16} />
                      </ActionIcon>
                    </Tooltip>
                  </Group>
                </Group>
              ))}
            </Stack>
          )}
        </Stack>
      )}
    </Stack>
  );
}
