import type { ReactNode } from 'react';
import { Badge, Checkbox, Group, NumberInput, Paper, Select, SimpleGrid, Slider, Stack, Text, ThemeIcon, Tooltip } from '@mantine/core';
import { IconBrowser, IconDownload, IconInfoCircle, IconNetwork, IconShieldLock } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import {
  applyViewerNetworkRules,
  DEFAULT_VIDEO,
  GPU_ONLY_VIDEO,
  gpuOnlyViewersOk,
  GUEST_VIEWER_KEYS,
  MEMORY_STEP_GB,
  RDP_VIEWER_KEYS,
  WIREGUARD_INTERFACE,
  ZGuestViewerKey,
  type TDomainInfo,
  type TGuestViewerKey,
  type THardwareAllowed,
  type THardwareItem,
} from '@vdi/contracts';
import classes from './Domains.module.css';
import '../../i18n/areas/content';

/** A disk size for people: MB under 1 GB, else GB. */
export const diskLabel = (t: (k: string, o?: Record<string, unknown>) => string, gb: number) =>
  gb < 1 ? t('domain_edit.disk_size_mb', { size: Math.max(1, Math.round(gb * 1024)) }) : t('domain_edit.disk_size_value', { size: gb });

/** A label with the translated name of a hardware choice, falling back to the server's. */
export function useItemLabel(group: 'interfaces' | 'videos' | 'boot_order' | 'disk_bus' | 'graphics') {
  const { t, i18n } = useTranslation();
  return (item: THardwareItem) => {
    const key = `domain_edit.choices.${group}.${item.id}`;
    return i18n.exists(key) ? t(key) : item.name;
  };
}

/** One number in the spec's steps: a slider for the feel and an input for the exact value. */
export function StepField(props: {
  label: string;
  hint?: string;
  value: number;
  onChange: (v: number) => void;
  min: number;
  max: number;
  step: number;
  unit?: string;
  disabled?: boolean;
  testId: string;
}) {
  const { label, hint, value, onChange, min, max, step, unit, disabled, testId } = props;
  // A value below the steps (a template's 0.25 GB) is kept until changed; a change snaps to the steps.
  const lo = Math.min(min, value);
  const hi = Math.max(max, min);
  const snap = (v: number) => Math.min(hi, Math.max(min, Math.round(v / step) * step));
  return (
    <div>
      <Group justify="space-between" mb={4} wrap="nowrap">
        <Text size="sm" fw={500}>
          {label}
        </Text>
        {hint && (
          <Text size="xs" c="dimmed">
            {hint}
          </Text>
        )}
      </Group>
      <Group gap="md" wrap="nowrap" align="center">
        <Slider
          style={{ flex: 1 }}
          value={Math.max(value, min)}
          onChange={(v) => onChange(snap(v))}
          min={min}
          max={hi}
          step={step}
          disabled={disabled || hi === min}
          label={(v) => `${v}${unit ? ` ${unit}` : ''}`}
          thumbLabel={label}
          marks={[{ value: min }, { value: hi }]}
        />
        <NumberInput
          w={112}
          value={value}
          onChange={(v) => typeof v === 'number' && onChange(v === value ? v : snap(v))}
          min={lo}
          max={hi}
          step={step}
          decimalScale={step < 1 ? 2 : 0}
          clampBehavior="strict"
          allowNegative={false}
          suffix={unit ? ` ${unit}` : undefined}
          disabled={disabled}
          aria-label={label}
          data-testid={testId}
        />
      </Group>
    </div>
  );
}

export type HardwareValue = { vcpus: number; memory: number; disk_size: number };

/** vCPUs and disk in steps of 1, memory in steps of 0.5 GB, up to the quota (spec core §5). */
export function HardwareSteps({
  value,
  onChange,
  quota,
  minDisk = 1,
  showDisk = true,
  disabled,
}: {
  value: HardwareValue;
  onChange: (v: HardwareValue) => void;
  quota: { memory: number; vcpus: number; desktops_disk_size: number };
  minDisk?: number;
  showDisk?: boolean;
  disabled?: boolean;
}) {
  const { t } = useTranslation();
  return (
    <Stack gap="lg">
      <StepField
        label={t('domain_edit.vcpus')}
        hint={t('domain_edit.up_to', { value: quota.vcpus })}
        value={value.vcpus}
        onChange={(vcpus) => onChange({ ...value, vcpus })}
        min={1}
        max={Math.max(1, Math.floor(quota.vcpus))}
        step={1}
        disabled={disabled}
        testId="hw-vcpus"
      />
      <StepField
        label={t('domain_edit.memory')}
        hint={t('domain_edit.up_to_gb', { value: quota.memory })}
        value={value.memory}
        onChange={(memory) => onChange({ ...value, memory })}
        min={MEMORY_STEP_GB}
        max={Math.max(MEMORY_STEP_GB, Math.floor(quota.memory / MEMORY_STEP_GB) * MEMORY_STEP_GB)}
        step={MEMORY_STEP_GB}
        unit="GB"
        disabled={disabled}
        testId="hw-memory"
      />
      {showDisk && (
        <StepField
          label={t('domain_edit.disk_size')}
          hint={t('domain_edit.up_to_gb', { value: quota.desktops_disk_size })}
          value={value.disk_size}
          onChange={(disk_size) => onChange({ ...value, disk_size })}
          min={minDisk}
          max={Math.max(minDisk, Math.floor(quota.desktops_disk_size))}
          step={1}
          unit="GB"
          disabled={disabled}
          testId="hw-disk"
        />
      )}
    </Stack>
  );
}

export type GuestNet = { viewers: TGuestViewerKey[]; interfaces: string[]; credentials: { username: string; password: string } };

/** A desktop's or template's viewers, networks and guest credentials, as the viewer fields edit them. */
export const guestNetOf = (info: { guest_properties: TDomainInfo['guest_properties']; hardware: Pick<TDomainInfo['hardware'], 'interfaces'> }): GuestNet => ({
  viewers: Object.keys(info.guest_properties.viewers).filter((k): k is TGuestViewerKey => ZGuestViewerKey.safeParse(k).success),
  interfaces: info.hardware.interfaces.map((i) => i.id),
  credentials: info.guest_properties.credentials,
});

const VIEWER_ICON: Record<TGuestViewerKey, ReactNode> = {
  browser_vnc: <IconBrowser size={18} />,
  file_spice: <IconDownload size={18} />,
  browser_rdp: <IconBrowser size={18} />,
  file_rdpgw: <IconDownload size={18} />,
  file_rdpvpn: <IconShieldLock size={18} />,
};

/**
 * The viewers, with the wireguard rules applied as they are chosen: an RDP viewer brings the
 * wireguard network along (and says so). `offered` (GET /user/hardware/allowed's `viewers`): a
 * server without the guest network offers no RDP viewer; one already chosen stays, to untick.
 */
export function ViewersField({ value, onChange, disabled, error, offered }: { value: GuestNet; onChange: (v: GuestNet) => void; disabled?: boolean; error?: string | null; offered?: readonly TGuestViewerKey[] }) {
  const { t } = useTranslation();
  const toggle = (key: TGuestViewerKey, on: boolean) => {
    const viewers = on ? [...value.viewers, key] : value.viewers.filter((v) => v !== key);
    onChange(applyViewerNetworkRules(value, { ...value, viewers }));
  };
  return (
    <Stack gap="xs">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
        {GUEST_VIEWER_KEYS.filter((key) => !offered || offered.includes(key) || value.viewers.includes(key)).map((key) => {
          const checked = value.viewers.includes(key);
          const rdp = RDP_VIEWER_KEYS.includes(key);
          return (
            <Paper
              key={key}
              withBorder
              p="sm"
              radius="md"
              className={classes.choice}
              data-checked={checked || undefined}
              data-disabled={disabled || undefined}
              onClick={() => !disabled && toggle(key, !checked)}
              data-testid={`viewer-${key}`}
            >
              <Group wrap="nowrap" gap="sm" align="flex-start">
                <Checkbox
                  checked={checked}
                  onChange={(e) => toggle(key, e.currentTarget.checked)}
                  onClick={(e) => e.stopPropagation()}
                  disabled={disabled}
                  aria-label={t(`domain_edit.viewers.${key}`)}
                  mt={2}
                />
                <ThemeIcon variant="light" color={checked ? 'indigo' : 'gray'} size={30} radius="md">
                  {VIEWER_ICON[key]}
                </ThemeIcon>
                <div style={{ minWidth: 0 }}>
                  <Group gap={6} wrap="wrap" style={{ rowGap: 2 }}>
                    <Text size="sm" fw={600}>
                      {t(`domain_edit.viewers.${key}`)}
                    </Text>
                    {rdp && (
                      <Tooltip label={t('domain_edit.needs_wireguard')} withArrow>
                        <Badge size="xs" variant="light" color="grape" leftSection={<IconNetwork size={10} />} style={{ flex: '0 0 auto', overflow: 'visible' }} styles={{ label: { overflow: 'visible' } }}>
                          VPN
                        </Badge>
                      </Tooltip>
                    )}
                  </Group>
                  <Text size="xs" c="dimmed">
                    {t(`domain_edit.viewers_hint.${key}`)}
                  </Text>
                </div>
              </Group>
            </Paper>
          );
        })}
      </SimpleGrid>
      {value.viewers.some((v) => RDP_VIEWER_KEYS.includes(v)) && value.interfaces.includes(WIREGUARD_INTERFACE) && (
        <Group gap={6} c="dimmed">
          <IconInfoCircle size={14} />
          <Text size="xs" data-testid="wireguard-note">
            {t('domain_edit.wireguard_added')}
          </Text>
        </Group>
      )}
      {error && (
        <Text size="xs" c="red" data-testid="viewers-error">
          {error}
        </Text>
      )}
    </Stack>
  );
}

/** A GPU profile (or none) and the video it goes with. */
export type GpuVideo = { gpu: string | null; video: string };

/** Desktops without a GPU get the default video (spec core §5). */
export const effectiveVideo = (v: GpuVideo) => (v.gpu ? v.video : DEFAULT_VIDEO);

/** "Only GPU" works only when every viewer is an RDP one (spec core §5). */
export const gpuVideoOk = (v: GpuVideo, viewers: readonly TGuestViewerKey[]) => gpuOnlyViewersOk([effectiveVideo(v)], viewers);

/**
 * The GPU profile select (none + the profiles this user may use) and the video select: the video
 * is chosen only with a GPU, and "Only GPU" shows the RDP-only error when other viewers are on.
 */
export function GpuVideoFields(props: {
  allowed: Pick<THardwareAllowed, 'videos' | 'reservables'>;
  value: GpuVideo;
  onChange: (v: GpuVideo) => void;
  viewers: readonly TGuestViewerKey[];
  disabled?: boolean;
  testId: string;
}) {
  const { t } = useTranslation();
  const videoLabel = useItemLabel('videos');
  const { value, onChange, disabled } = props;
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
      <Select
        label={t('domain_edit.gpu')}
        description={t('domain_edit.gpu_hint')}
        data={[{ value: '', label: t('domain_edit.gpu_none') }, ...props.allowed.reservables.vgpus.map((x) => ({ value: x.id, label: x.name }))]}
        value={value.gpu ?? ''}
        onChange={(v) => onChange({ ...value, gpu: v ? v : null })}
        allowDeselect={false}
        disabled={disabled}
        data-testid={`${props.testId}-gpu`}
      />
      <Select
        label={t('domain_edit.video')}
        description={t(value.gpu ? 'domain_edit.video_hint_gpu' : 'domain_edit.video_hint')}
        data={props.allowed.videos.map((x) => ({ value: x.id, label: videoLabel(x), disabled: x.id === GPU_ONLY_VIDEO && !value.gpu }))}
        value={effectiveVideo(value)}
        onChange={(v) => v && onChange({ ...value, video: v })}
        allowDeselect={false}
        disabled={disabled || !value.gpu}
        error={!gpuVideoOk(value, props.viewers) ? t('errors.only_works_rdp') : undefined}
        data-testid={`${props.testId}-video`}
      />
    </SimpleGrid>
  );
}
