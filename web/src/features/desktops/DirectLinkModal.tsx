import { useState } from 'react';
import { ActionIcon, Alert, Button, CopyButton, Group, Modal, Skeleton, Stack, Switch, Text, TextInput, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCheck, IconCopy, IconExternalLink, IconRefresh } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { directLink, disableJumper, jumperQuery, resetJumper } from '../../entities/desktop/api';
import { builtInText } from '../../lib/built-in-text';

function Body({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const q = jumperQuery(d.id);
  const { data: token, isLoading, isError, refetch } = useQuery(q);
  const [confirmReset, setConfirmReset] = useState(false);
  const set = (v: string | false) => qc.setQueryData(q.queryKey, v);

  const enable = useMutation({
    mutationFn: () => resetJumper(d.id),
    onSuccess: (tok, _v) => {
      set(tok);
      setConfirmReset(false);
      notifySuccess(t(token ? 'desktops.direct.renewed' : 'desktops.direct.enabled'));
    },
    onError: (err) => handleError(err),
  });
  const disable = useMutation({
    mutationFn: () => disableJumper(d.id),
    onSuccess: () => {
      set(false);
      setConfirmReset(false);
      notifySuccess(t('desktops.direct.disabled'));
    },
    onError: (err) => handleError(err),
  });

  if (isLoading) return <Skeleton h={120} />;
  if (isError)
    return (
      <Stack align="flex-start">
        <Text size="sm" c="red">
          {t('errors.generic_error')}
        </Text>
        <Button variant="default" size="xs" onClick={() => void refetch()}>
          {t('common.retry')}
        </Button>
      </Stack>
    );

  const link = token ? directLink(token) : '';
  const busy = enable.isPending || disable.isPending;
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        {t('desktops.direct.explain')}
      </Text>
      <Switch
        checked={Boolean(token)}
        disabled={busy}
        onChange={(e) => (e.currentTarget.checked ? enable.mutate() : disable.mutate())}
        label={t(token ? 'desktops.direct.on' : 'desktops.direct.off')}
        description={t('desktops.direct.toggle_hint')}
        data-testid="direct-link-toggle"
      />
      {token && (
        <>
          <TextInput
            label={t('desktops.direct.link')}
            value={link}
            readOnly
            onFocus={(e) => e.currentTarget.select()}
            data-testid="direct-link-url"
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
            rightSectionWidth={72}
            rightSection={
              <Group gap={2} wrap="nowrap">
                <CopyButton value={link} timeout={1500}>
                  {({ copied, copy }) => (
                    <Tooltip label={t(copied ? 'desktops.direct.copied' : 'desktops.direct.copy')} withArrow>
                      <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={t('desktops.direct.copy')} data-testid="direct-link-copy">
                        {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
                      </ActionIcon>
                    </Tooltip>
                  )}
                </CopyButton>
                <Tooltip label={t('desktops.direct.open')} withArrow>
                  <ActionIcon variant="subtle" color="gray" component="a" href={link} target="_blank" rel="noopener noreferrer" aria-label={t('desktops.direct.open')}>
                    <IconExternalLink size={16} />
                  </ActionIcon>
                </Tooltip>
              </Group>
            }
          />
          <Alert variant="light" color="orange" icon={<IconAlertTriangle size={18} />} p="sm">
            <Text size="xs">{t('desktops.direct.warning')}</Text>
          </Alert>
          {confirmReset ? (
            <Group justify="space-between" wrap="wrap" gap="xs">
              <Text size="sm" fw={500}>
                {t('desktops.direct.reset_confirm')}
              </Text>
              <Group gap="xs">
                <Button size="xs" variant="default" onClick={() => setConfirmReset(false)}>
                  {t('common.cancel')}
                </Button>
                <Button size="xs" color="orange" loading={enable.isPending} onClick={() => enable.mutate()} data-testid="direct-link-reset-confirm">
                  {t('desktops.direct.reset')}
                </Button>
              </Group>
            </Group>
          ) : (
            <Group justify="flex-end">
              <Button size="xs" variant="default" leftSection={<IconRefresh size={14} />} disabled={busy} onClick={() => setConfirmReset(true)} data-testid="direct-link-reset">
                {t('desktops.direct.reset')}
              </Button>
            </Group>
          )}
        </>
      )}
    </Stack>
  );
}

export function DirectLinkModal({ desktop, onClose }: { desktop: TDesktop | null; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Modal opened={Boolean(desktop)} onClose={onClose} title={t('desktops.direct.title', { name: builtInText(t, desktop?.name ?? '') })} centered size="lg" data-testid="direct-link-modal">
      {desktop && <Body d={desktop} />}
    </Modal>
  );
}
