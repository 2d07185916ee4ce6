import { useState } from 'react';
import { Alert, Badge, Button, Code, CopyButton, Group, Modal, Paper, Progress, SegmentedControl, SimpleGrid, Skeleton, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconCpu, IconDownload, IconPlayerPause, IconPlugConnectedX, IconPlus, IconServer, IconTrash } from '@tabler/icons-react';
import dayjs from 'dayjs';
import type { TAdminHypervisor, TAdminHypervisorHostKey } from '@vdi/contracts';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { builtInText } from '../../../lib/built-in-text';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { useAdminEvent } from '../system/live';
import { addHypervisor, applyHypervisor, drainHypervisor, hypervisorsQuery, issueTlsBundle, markHypervisorDown, removeHypervisor, shutDownDesktops, sshKeyQuery, updateHypervisor } from './api';
import { formatBytes } from '../../../entities/format';
import { formatMb, percent } from './format';
import { tlsHostOf, tlsInstallScript } from './tls-bundle';
import { downloadText } from '../../../lib/download';
import '../../../i18n/areas/admin-infra';
import { numberFormat } from '../../../i18n/intl';

type Mode = 'all' | 'only_forced' | 'disabled';
const modeOf = (h: TAdminHypervisor): Mode => (!h.enabled ? 'disabled' : h.only_forced ? 'only_forced' : 'all');
const bodyOf = (m: Mode) => (m === 'all' ? { enabled: true, only_forced: false } : m === 'only_forced' ? { enabled: true, only_forced: true } : { enabled: false, only_forced: false });
const usageColor = (p: number) => (p >= 90 ? 'red' : p >= 70 ? 'orange' : 'teal');

function Meter({ label, value, detail, testId }: { label: string; value: number; detail: string; testId: string }) {
  return (
    <Stack gap={4} data-testid={testId}>
      <Group justify="space-between" gap="xs" wrap="nowrap">
        <Text size="sm" fw={500}>
          {label}
        </Text>
        <Text size="sm" c="dimmed" data-testid={`${testId}-detail`} style={{ whiteSpace: 'nowrap' }}>
          {detail}
        </Text>
      </Group>
      <Progress value={value} color={usageColor(value)} size="md" radius="xl" aria-label={label} />
    </Stack>
  );
}

function HypervisorCard({ h }: { h: TAdminHypervisor }) {
  const { t, i18n } = useTranslation();
  const { busy, error, run } = useAction();
  const narrow = useMediaQuery('(max-width: 36em)');
  const lang = i18n.language;
  const num = (v: number, digits = 0) => numberFormat(lang, { maximumFractionDigits: digits }).format(v);
  const online = h.state === 'Online';
  const memory = percent(h.memory_used_mb, h.memory_total_mb);
  const [running, setRunning] = useState<string[] | null>(null);
  const [removing, setRemoving] = useState(false);
  const [markingDown, setMarkingDown] = useState(false);
  const [released, setReleased] = useState<number | null>(null);
  /** its name in the reader's language while it is the seeded one ("This server") */
  const name = builtInText(t, h.name);

  return (
    <Paper withBorder radius="md" p="lg" data-testid="hypervisor-card" data-id={h.id} data-accepts={String(h.accepts_starts)}>
      <Group justify="space-between" align="flex-start" mb="md" wrap="wrap" gap="sm">
        <Group gap="sm" wrap="nowrap">
          <IconServer size={26} />
          <Stack gap={0}>
            <Title order={2} size="h4">
              {name}
            </Title>
            <Text size="xs" c="dimmed" ff="monospace">
              {h.id}
            </Text>
          </Stack>
        </Group>
        <Group gap={6}>
          <Badge color={online ? 'teal' : 'gray'} variant="light" data-testid="hypervisor-state">
            {h.off_by_configuration ? t('admin_infra.hypervisors.off_state') : t(`admin_infra.hypervisors.states.${h.state}`)}
          </Badge>
          {h.accel && (
            <Badge color={h.accel === 'kvm' ? 'blue' : 'yellow'} variant="light" data-testid="hypervisor-accel">
              {t(`admin_infra.hypervisors.accel.${h.accel}`)}
            </Badge>
          )}
          {h.draining && (
            <Badge color="orange" variant="light" data-testid="hypervisor-draining">
              {t('admin_infra.hypervisors.draining')}
            </Badge>
          )}
          {!h.accepts_starts && (
            <Badge color="orange" variant="filled" leftSection={<IconPlayerPause size={12} />} data-testid="hypervisor-no-starts">
              {t('admin_infra.hypervisors.no_new_starts')}
            </Badge>
          )}
        </Group>
      </Group>

      {online ? (
        <Stack gap="md">
          <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="sm">
            <Figure label={t('admin_infra.hypervisors.cpus')} value={num(h.cpus)} testId="hypervisor-cpus" />
            <Figure label={t('admin_infra.hypervisors.memory')} value={formatMb(h.memory_total_mb, lang)} testId="hypervisor-memory" />
            <Figure label={t('admin_infra.hypervisors.running')} value={num(h.desktops_running)} testId="hypervisor-running" />
            <Figure label={t('admin_infra.hypervisors.load')} value={h.load.map((l) => num(l, 1)).join(' · ')} testId="hypervisor-load" hint={t('admin_infra.hypervisors.load_hint')} />
          </SimpleGrid>
          <Meter label={t('admin_infra.hypervisors.cpu_used')} value={h.cpu_used_percent} detail={`${num(h.cpu_used_percent, 1)} %`} testId="hypervisor-cpu-meter" />
          <Meter
            label={t('admin_infra.hypervisors.memory_used')}
            value={memory}
            detail={t('admin_infra.hypervisors.of', { used: formatMb(h.memory_used_mb, lang), total: formatMb(h.memory_total_mb, lang) })}
            testId="hypervisor-memory-meter"
          />
          <Text size="sm" c="dimmed" data-testid="hypervisor-desktops">
            {h.desktops_running === 0
              ? t('admin_infra.hypervisors.no_desktops')
              : t('admin_infra.hypervisors.desktops_given', { count: h.desktops_running, memory: formatMb(h.desktops_memory_mb, lang), vcpus: num(h.desktops_vcpus) })}
          </Text>
          <Text size="sm" c="dimmed" data-testid="hypervisor-cpu-model">
            {t('admin_infra.hypervisors.cpu_model', { model: h.cpu_model || '—' })} · {t('admin_infra.hypervisors.starts_in_flight', { n: h.starts_in_flight })}
          </Text>
          <Stack gap={2} data-testid="hypervisor-pools">
            <Text size="sm" fw={500}>
              {t('admin_infra.hypervisors.pools')}
            </Text>
            {h.pools.length === 0 && (
              <Text size="sm" c="dimmed">
                {t('admin_infra.hypervisors.no_pools')}
              </Text>
            )}
            {h.pools.map((p) => (
              <Text key={p.name} size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                {t('admin_infra.hypervisors.pool_line', { name: p.name, path: p.path, free: formatBytes(p.free_bytes, lang), total: formatBytes(p.capacity_bytes, lang) })}
              </Text>
            ))}
          </Stack>
          <Text size="sm" c="dimmed" data-testid="hypervisor-gpus">
            {h.gpus.length === 0
              ? t('admin_infra.hypervisors.no_gpus')
              : t('admin_infra.hypervisors.gpus', { list: h.gpus.map((g) => `${g.vendor} ${g.device} (${g.address})`).join(', ') })}
          </Text>
        </Stack>
      ) : (
        <Stack gap="xs">
          <Text size="sm" c="dimmed" data-testid="hypervisor-offline-body">
            {t(h.off_by_configuration ? 'admin_infra.hypervisors.off_body' : 'admin_infra.hypervisors.offline_body')}
          </Text>
          {h.desktops_unknown > 0 && (
            <Text size="sm" fw={500} data-testid="hypervisor-unknown">
              {t('admin_infra.hypervisors.unknown_desktops', { n: h.desktops_unknown })}
            </Text>
          )}
        </Stack>
      )}
      {released !== null && (
        <Alert color="teal" mt="md" withCloseButton onClose={() => setReleased(null)} data-testid="hypervisor-down-done">
          {t('admin_infra.hypervisors.down_done', { n: released })}
        </Alert>
      )}
      {h.watched_by && (
        <Text size="xs" c="dimmed" mt="sm" data-testid="hypervisor-watched-by">
          {t('admin_infra.hypervisors.watched_by', { server: h.watched_by })}
        </Text>
      )}
      {h.last_error && (
        <Alert color="red" mt="md" icon={<IconAlertCircle size={16} />} title={t('admin_infra.hypervisors.last_error')} data-testid="hypervisor-last-error">
          {h.last_error}
        </Alert>
      )}

      <Stack gap={6} mt="lg">
        <Text size="sm" fw={500} id={`starts-${h.id}`}>
          {t('admin_infra.hypervisors.starts')}
        </Text>
        <SegmentedControl
          aria-labelledby={`starts-${h.id}`}
          value={modeOf(h)}
          disabled={busy}
          fullWidth
          orientation={narrow ? 'vertical' : 'horizontal'}
          data={(['all', 'only_forced', 'disabled'] as const).map((m) => ({ value: m, label: <span data-testid={`hypervisor-mode-${m}`}>{t(`admin_infra.hypervisors.modes.${m}`)}</span> }))}
          onChange={(v) => void run(() => updateHypervisor(h.id, bodyOf(v as Mode)))}
          data-testid="hypervisor-mode"
        />
        <Text size="xs" c="dimmed">
          {h.draining ? t('admin_infra.hypervisors.draining_hint') : t(`admin_infra.hypervisors.mode_hints.${modeOf(h)}`)}
        </Text>
        <Group gap="xs" mt={4}>
          <Button
            variant="light"
            color={h.draining ? 'teal' : 'orange'}
            size="xs"
            loading={busy}
            data-testid="hypervisor-drain"
            onClick={() =>
              void run(async () => {
                const answer = await drainHypervisor(h.id, !h.draining);
                if (answer.hypervisor.draining) setRunning(answer.running_desktop_ids);
              })
            }
          >
            {t(h.draining ? 'admin_infra.hypervisors.undrain' : 'admin_infra.hypervisors.drain')}
          </Button>
          {h.uri !== null && !online && h.desktops_unknown > 0 && (
            <Button variant="light" color="red" size="xs" leftSection={<IconPlugConnectedX size={14} />} disabled={busy} data-testid="hypervisor-mark-down" onClick={() => setMarkingDown(true)}>
              {t('admin_infra.hypervisors.mark_down')}
            </Button>
          )}
          {h.uri !== null && (
            <Button
              variant="subtle"
              color="red"
              size="xs"
              leftSection={<IconTrash size={14} />}
              disabled={busy || h.desktops_running > 0 || h.desktops_unknown > 0}
              title={h.desktops_running > 0 || h.desktops_unknown > 0 ? t('admin_infra.hypervisors.remove_busy') : undefined}
              data-testid="hypervisor-remove"
              onClick={() => setRemoving(true)}
            >
              {t('admin_infra.hypervisors.remove')}
            </Button>
          )}
        </Group>
        {error && (
          <Alert color="red" icon={<IconAlertCircle size={16} />} role="alert">
            {error}
          </Alert>
        )}
      </Stack>
      <Modal opened={running !== null} onClose={() => setRunning(null)} title={t('admin_infra.hypervisors.drain_title', { name })} centered>
        <Stack data-testid="hypervisor-drain-dialog">
          <Text size="sm">{t('admin_infra.hypervisors.drain_body', { n: running?.length ?? 0 })}</Text>
          {(running?.length ?? 0) > 0 && (
            <Alert color="orange" icon={<IconAlertCircle size={16} />}>
              {t('admin_infra.hypervisors.shutdown_warning')}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRunning(null)}>
              {t('admin_infra.hypervisors.close')}
            </Button>
            {(running?.length ?? 0) > 0 && (
              <Button color="orange" loading={busy} data-testid="hypervisor-shutdown-all" onClick={() => void run(async () => {
                await shutDownDesktops(running ?? []);
                setRunning(null);
              })}>
                {t('admin_infra.hypervisors.shutdown_all')}
              </Button>
            )}
          </Group>
        </Stack>
      </Modal>
      <Modal opened={markingDown} onClose={() => setMarkingDown(false)} title={t('admin_infra.hypervisors.down_title', { name })} centered>
        <Stack data-testid="hypervisor-down-dialog">
          <Text size="sm">{t('admin_infra.hypervisors.down_body', { n: h.desktops_unknown })}</Text>
          <Alert color="orange" icon={<IconAlertCircle size={16} />}>
            {t('admin_infra.hypervisors.down_warning')}
          </Alert>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setMarkingDown(false)}>
              {t('admin_infra.hypervisors.close')}
            </Button>
            <Button color="red" loading={busy} data-testid="hypervisor-mark-down-confirm" onClick={() => void run(async () => {
              setMarkingDown(false);
              const answer = await markHypervisorDown(h.id);
              setReleased(answer.released_desktop_ids.length);
            })}>
              {t('admin_infra.hypervisors.mark_down')}
            </Button>
          </Group>
        </Stack>
      </Modal>
      <Modal opened={removing} onClose={() => setRemoving(false)} title={t('admin_infra.hypervisors.remove_title', { name })} centered>
        <Stack>
          <Text size="sm">{t('admin_infra.hypervisors.remove_body')}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRemoving(false)}>
              {t('admin_infra.hypervisors.close')}
            </Button>
            <Button color="red" loading={busy} data-testid="hypervisor-remove-confirm" onClick={() => void run(async () => {
              setRemoving(false);
              await removeHypervisor(h.id);
            })}>
              {t('admin_infra.hypervisors.remove')}
            </Button>
          </Group>
        </Stack>
      </Modal>
      <Text size="xs" c="dimmed" mt="sm" ta="right">
        {t('admin_infra.hypervisors.updated', { time: dayjs(h.updated).format('HH:mm:ss') })}
      </Text>
    </Paper>
  );
}

function Figure({ label, value, testId, hint }: { label: string; value: string; testId: string; hint?: string }) {
  return (
    <Paper withBorder radius="sm" p="xs" bg="var(--mantine-color-default-hover)">
      <Text size="xs" c="dimmed" title={hint}>
        {label}
      </Text>
      <Text fw={700} size="lg" data-testid={testId}>
        {value}
      </Text>
    </Paper>
  );
}

/** Add a host by its libvirt URI: the installation's key to copy, then the host key to confirm. */
function AddHypervisor({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const { busy, error, run } = useAction();
  const key = useQuery({ ...sshKeyQuery, enabled: opened });
  const [uri, setUri] = useState('');
  const [name, setName] = useState('');
  const [hostKey, setHostKey] = useState<TAdminHypervisorHostKey | null>(null);
  const tlsHost = tlsHostOf(uri);
  const close = () => {
    setHostKey(null);
    setUri('');
    setName('');
    onClose();
  };
  const submit = () =>
    void run(async () => {
      const answer = await addHypervisor({ uri, ...(name.trim() && { name: name.trim() }), ...(hostKey && { host_key_fingerprint: hostKey.fingerprint }) });
      if ('fingerprint' in answer) setHostKey(answer);
      else close();
    });
  return (
    <Modal opened={opened} onClose={close} title={t('admin_infra.hypervisors.add_title')} centered size="lg">
      <Stack data-testid="hypervisor-add-dialog">
        {tlsHost ? (
          <Stack gap={4} data-testid="hypervisor-tls">
            <Text size="sm" fw={500}>
              {t('admin_infra.hypervisors.tls_title')}
            </Text>
            <Text size="xs" c="dimmed">
              {t('admin_infra.hypervisors.tls_hint')}
            </Text>
            <Group>
              <Button
                size="xs"
                variant="light"
                leftSection={<IconDownload size={14} />}
                loading={busy}
                data-testid="hypervisor-tls-download"
                onClick={() =>
                  void run(async () => {
                    const bundle = await issueTlsBundle(tlsHost);
                    downloadText(tlsInstallScript(bundle), 'text/x-shellscript', `libvirt-tls-${tlsHost.replace(/[^A-Za-z0-9.-]/g, '_')}.sh`);
                  })
                }
              >
                {t('admin_infra.hypervisors.tls_download')}
              </Button>
            </Group>
          </Stack>
        ) : (
        <Stack gap={4}>
          <Text size="sm" fw={500}>
            {t('admin_infra.hypervisors.install_key')}
          </Text>
          <Text size="xs" c="dimmed">
            {t('admin_infra.hypervisors.install_key_hint')}
          </Text>
          {key.data?.public_key ? (
            <Group gap="xs" wrap="nowrap" align="flex-start">
              <Code block style={{ flex: 1, overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }} data-testid="hypervisor-install-key">
                {key.data.public_key}
              </Code>
              <CopyButton value={key.data.public_key}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="light" onClick={copy}>
                    {t(copied ? 'admin_infra.hypervisors.copied' : 'admin_infra.hypervisors.copy')}
                  </Button>
                )}
              </CopyButton>
            </Group>
          ) : (
            <Text size="sm" c="dimmed" data-testid="hypervisor-install-key-none">
              {t('admin_infra.hypervisors.install_key_none')}
            </Text>
          )}
        </Stack>
        )}
        <TextInput
          label={t('admin_infra.hypervisors.uri')}
          description={t('admin_infra.hypervisors.uri_hint')}
          placeholder="qemu+ssh://vdi@host/system"
          value={uri}
          disabled={hostKey !== null}
          onChange={(e) => setUri(e.currentTarget.value)}
          data-testid="hypervisor-uri"
        />
        <TextInput label={t('admin_infra.hypervisors.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={64} />
        {hostKey && (
          <Alert color="blue" title={t('admin_infra.hypervisors.host_key_title')} data-testid="hypervisor-host-key">
            <Text size="sm">{t(hostKey.algorithm === 'x509' ? 'admin_infra.hypervisors.host_cert_body' : 'admin_infra.hypervisors.host_key_body')}</Text>
            <Code block mt="xs" style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
              {hostKey.algorithm} {hostKey.fingerprint}
            </Code>
          </Alert>
        )}
        {error && (
          <Alert color="red" icon={<IconAlertCircle size={16} />} role="alert" data-testid="hypervisor-add-error">
            {error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {t('admin_infra.hypervisors.close')}
          </Button>
          <Button loading={busy} disabled={uri.trim() === ''} onClick={submit} data-testid="hypervisor-add-submit">
            {t(hostKey ? 'admin_infra.hypervisors.confirm_add' : 'admin_infra.hypervisors.connect')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Hypervisors (admins): each host's state and numbers, live, and whether it takes new desktops. */
export default function HypervisorsPage() {
  const { t, i18n } = useTranslation();
  const { data, error, isPending } = useQuery(hypervisorsQuery);
  useAdminEvent('hypervisor_update', applyHypervisor);
  const [adding, setAdding] = useState(false);

  return (
    <>
      <PageHeader
        title={t('admin_infra.hypervisors.heading')}
        subtitle={t('admin_infra.hypervisors.subheading')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setAdding(true)} data-testid="hypervisor-add">
            {t('admin_infra.hypervisors.add')}
          </Button>
        }
      />
      {/* Mounted while open: each opening starts empty (no address, key or error of the last one). */}
      {adding && <AddHypervisor opened onClose={() => setAdding(false)} />}
      {error && !data ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_infra.load_failed')} data-testid="hypervisors-error">
          {errorMessage(t, error, (k) => i18n.exists(k))}
        </Alert>
      ) : isPending || !data ? (
        <Skeleton height={360} radius="md" />
      ) : data.items.length === 0 ? (
        <EmptyState icon={<IconCpu size={28} />} title={t('admin_infra.hypervisors.empty_title')} body={t('admin_infra.hypervisors.empty_body')} />
      ) : (
        <SimpleGrid cols={{ base: 1, xl: data.items.length > 1 ? 2 : 1 }} spacing="md" maw={data.items.length > 1 ? undefined : 880}>
          {data.items.map((h) => (
            <HypervisorCard key={h.id} h={h} />
          ))}
        </SimpleGrid>
      )}
    </>
  );
}
