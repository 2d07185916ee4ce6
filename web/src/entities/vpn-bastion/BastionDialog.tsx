import { useEffect, useState } from 'react';
import { ActionIcon, Alert, Button, CopyButton, Divider, Group, NumberInput, Skeleton, Stack, Switch, Text, Textarea, TextInput, Title, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconCheck, IconCopy, IconInfoCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { bastionAddresses, desktopState, type TBastion, type TDesktop } from '@vdi/contracts';
import i18n from '../../i18n';
import { configQuery } from '../../lib/queries';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { bastionQuery, saveBastion } from './api';
import '../../i18n/areas/vpn-bastion';

const KEY_CODES = ['bastion_authorized_key_invalid', 'bastion_authorized_keys_too_many'];

function CopyField({ label, value, testId }: { label: string; value: string; testId: string }) {
  const { t } = useTranslation();
  return (
    <TextInput
      label={label}
      value={value}
      readOnly
      onFocus={(e) => e.currentTarget.select()}
      data-testid={testId}
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
      rightSection={
        <CopyButton value={value} timeout={1500}>
          {({ copied, copy }) => (
            <Tooltip label={t(copied ? 'bastion.copied' : 'bastion.copy')} withArrow>
              <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={`${t('bastion.copy')}: ${label}`}>
                {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      }
    />
  );
}

type Form = { sshEnabled: boolean; sshPort: number; keys: string; httpEnabled: boolean; httpPort: number; httpsPort: number };
const formOf = (b: TBastion): Form => ({
  sshEnabled: b.ssh.enabled,
  sshPort: b.ssh.port,
  keys: b.ssh.authorized_keys.join('\n'),
  httpEnabled: b.http.enabled,
  httpPort: b.http.http_port,
  httpsPort: b.http.https_port,
});
const port = (v: string | number, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535 ? v : fallback);

/** A desktop's bastion: the addresses it answers on (the "bastion info") and its settings, the authorized keys one per line. */
export function BastionDialog({ d, onClose }: { d: TDesktop; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const q = bastionQuery(d.id);
  const { data: target, isLoading, isError, refetch } = useQuery(q);
  const { data: config } = useQuery(configQuery);
  const [form, setForm] = useState<Form | null>(null);
  const [keysError, setKeysError] = useState<string | null>(null);
  useEffect(() => {
    if (target && !form) setForm(formOf(target));
  }, [target, form]);
  const save = useMutation({
    mutationFn: (f: Form) =>
      saveBastion(d.id, {
        ssh: { enabled: f.sshEnabled, port: f.sshPort, authorized_keys: f.keys },
        http: { enabled: f.httpEnabled, http_port: f.httpPort, https_port: f.httpsPort },
      }),
    onSuccess: (saved) => {
      qc.setQueryData(q.queryKey, saved);
      setForm(formOf(saved));
      notifySuccess(t('bastion.saved'));
      onClose();
    },
    onError: (err) => {
      if (err instanceof HttpError && KEY_CODES.includes(err.code)) setKeysError(errorMessage(t, err, (k) => i18n.exists(k)));
      else handleError(err);
    },
  });

  if (isLoading || (target && !form)) return <Skeleton h={280} />;
  if (isError || !target || !form)
    return (
      <Stack align="flex-start" data-testid="bastion-load-error">
        <Text size="sm" c="red">
          {t('bastion.load_error')}
        </Text>
        <Button variant="default" size="xs" onClick={() => void refetch()}>
          {t('common.retry')}
        </Button>
      </Stack>
    );

  const addresses = config ? bastionAddresses(target.id, config) : null;
  const started = desktopState(d.state) === 'started';
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch });
  const keyCount = form.keys.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#')).length;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        setKeysError(null);
        save.mutate(form);
      }}
    >
      <Stack gap="md" data-testid="bastion-dialog">
        <Text size="sm" c="dimmed">
          {t('bastion.intro')}
        </Text>
        {!started && (
          <Alert variant="light" color="gray" icon={<IconInfoCircle size={18} />} p="sm" data-testid="bastion-not-started">
            <Text size="xs">{t('bastion.not_started')}</Text>
          </Alert>
        )}
        {addresses && (target.ssh.enabled || target.http.enabled) && (
          <Stack gap="xs" data-testid="bastion-info">
            <Title order={3} size="h6">
              {t('bastion.addresses')}
            </Title>
            {target.ssh.enabled && config?.bastion_ssh_port && <CopyField label={t('bastion.ssh_command')} value={addresses.ssh} testId="bastion-ssh-command" />}
            {target.http.enabled && <CopyField label={t('bastion.http_address')} value={addresses.http} testId="bastion-http-address" />}
            {target.http.enabled && <CopyField label={t('bastion.https_address')} value={addresses.https} testId="bastion-https-address" />}
          </Stack>
        )}
        <Divider label={t('bastion.ssh')} labelPosition="left" />
        <Switch checked={form.sshEnabled} onChange={(e) => set({ sshEnabled: e.currentTarget.checked })} label={t('bastion.ssh_enabled')} data-testid="bastion-ssh-enabled" />
        <NumberInput label={t('bastion.ssh_port')} min={1} max={65535} allowDecimal={false} w={200} value={form.sshPort} onChange={(v) => set({ sshPort: port(v, form.sshPort) })} data-testid="bastion-ssh-port" />
        <Textarea
          label={t('bastion.keys')}
          description={`${t('bastion.keys_hint')} · ${t('bastion.keys_count', { count: keyCount })}`}
          autosize
          minRows={3}
          maxRows={10}
          value={form.keys}
          error={keysError}
          onChange={(e) => {
            setKeysError(null);
            set({ keys: e.currentTarget.value });
          }}
          placeholder="ssh-ed25519 AAAA… me@laptop"
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
          spellCheck={false}
          data-testid="bastion-keys"
        />
        <Divider label={t('bastion.web')} labelPosition="left" />
        <Switch checked={form.httpEnabled} onChange={(e) => set({ httpEnabled: e.currentTarget.checked })} label={t('bastion.http_enabled')} data-testid="bastion-http-enabled" />
        <Group grow wrap="wrap">
          <NumberInput label={t('bastion.http_port')} min={1} max={65535} allowDecimal={false} value={form.httpPort} onChange={(v) => set({ httpPort: port(v, form.httpPort) })} data-testid="bastion-http-port" />
          <NumberInput label={t('bastion.https_port')} min={1} max={65535} allowDecimal={false} value={form.httpsPort} onChange={(v) => set({ httpsPort: port(v, form.httpsPort) })} data-testid="bastion-https-port" />
        </Group>
        <Group justify="flex-end" gap="xs">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={save.isPending} data-testid="bastion-save">
            {t('bastion.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
