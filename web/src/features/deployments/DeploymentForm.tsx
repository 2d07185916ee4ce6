import type { ReactNode } from 'react';
import { Alert, Button, Card, Group, SimpleGrid, Skeleton, Stack, Switch, Text, Textarea, TextInput, ThemeIcon, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { IconAlertTriangle, IconUsersGroup } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DOMAIN_DESCRIPTION_MAX, DOMAIN_NAME_MAX, DOMAIN_NAME_MIN, videowallAvailable, type TDeploymentHardware, type THardwareAllowed } from '@vdi/contracts';
import { rules } from '../../lib/validation';
import { effectiveVideo, GpuVideoFields, gpuVideoOk, HardwareSteps, ViewersField, type GpuVideo, type GuestNet } from '../../entities/domain/fields';
import classes from '../../entities/domain/Domains.module.css';
import '../../i18n/areas/deployments';

export type DeploymentTexts = { name: string; description: string; desktop_name: string };
export type DeploymentChoices = { guest: GuestNet; hw: { vcpus: number; memory: number }; gpuVideo: GpuVideo; recreate: boolean; visible: boolean };

/** The hardware part of POST /deployments and its edit: vCPUs, memory, networks, video and GPU profile. */
export const hardwareOf = (c: DeploymentChoices): TDeploymentHardware => ({
  vcpus: c.hw.vcpus,
  memory: c.hw.memory,
  interfaces: c.guest.interfaces,
  videos: [effectiveVideo(c.gpuVideo)],
  reservables: { vgpus: c.gpuVideo.gpu ? [c.gpuVideo.gpu] : null },
});

/**
 * The fields a deployment is made and edited with: names, viewers (the wireguard rules apply as
 * they are chosen; the videowall needs the browser VNC viewer), hardware within the quota, a GPU
 * profile and its video ("Only GPU" only with RDP viewers), the
 * students' recreate right and, when new, whether it starts visible.
 */
export function DeploymentForm(props: {
  initial: DeploymentTexts;
  choices: DeploymentChoices;
  onChoices: (c: DeploymentChoices) => void;
  /** GET /user/hardware/allowed: the quota, the videos and the GPU profiles */
  allowed: THardwareAllowed | undefined;
  /** when new: the template step and the users step, above the rest */
  before?: ReactNode;
  /** when editing: cards saved on their own (preferred hypervisors), below the rest */
  after?: ReactNode;
  /** when new: the visible switch */
  withVisible?: boolean;
  viewerError: string | null;
  setViewerError: (e: string | null) => void;
  onSubmit: (v: DeploymentTexts) => void;
  onCancel: () => void;
  submitLabel: string;
  submitIcon: ReactNode;
  busy: boolean;
  disabled?: boolean;
  summary: ReactNode;
  nameError?: string | null;
}) {
  const { t } = useTranslation();
  const r = rules(t);
  const { choices, onChoices } = props;
  const form = useForm({
    mode: 'controlled',
    initialValues: props.initial,
    validate: {
      name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      desktop_name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      description: r.maxLength(DOMAIN_DESCRIPTION_MAX),
    },
  });
  const submit = form.onSubmit((v) => {
    if (choices.guest.viewers.length === 0) return props.setViewerError(t('errors.one_viewer_minimum'));
    if (!gpuVideoOk(choices.gpuVideo, choices.guest.viewers)) return props.setViewerError(t('errors.only_works_rdp'));
    props.onSubmit({ name: v.name.trim(), description: v.description.trim(), desktop_name: v.desktop_name.trim() });
  });
  const noVideowall = choices.guest.viewers.length > 0 && !videowallAvailable(choices.guest.viewers);

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="lg">
        {props.before}
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb="md">
              {t('deployments.form.step_names')}
            </Title>
            <Stack gap="md">
              <TextInput
                label={t('deployments.form.name')}
                description={t('deployments.form.name_hint')}
                required
                maxLength={DOMAIN_NAME_MAX + 10}
                data-testid="deployment-form-name"
                {...form.getInputProps('name')}
                error={form.errors.name ?? props.nameError}
              />
              <TextInput
                label={t('deployments.form.desktop_name')}
                description={t('deployments.form.desktop_name_hint')}
                required
                maxLength={DOMAIN_NAME_MAX + 10}
                data-testid="deployment-form-desktop-name"
                {...form.getInputProps('desktop_name')}
              />
              <Textarea label={t('deployments.form.description')} autosize minRows={2} maxRows={5} data-testid="deployment-form-description" {...form.getInputProps('description')} />
            </Stack>
          </Card>
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb={4}>
              {t('deployments.form.step_viewers')}
            </Title>
            <Text size="sm" c="dimmed" mb="md">
              {t('deployments.form.step_viewers_hint')}
            </Text>
            <ViewersField
              offered={props.allowed?.viewers}
              value={choices.guest}
              onChange={(guest) => {
                onChoices({ ...choices, guest });
                props.setViewerError(null);
              }}
              error={props.viewerError}
              disabled={props.disabled}
            />
            {noVideowall && (
              <Alert color="orange" variant="light" icon={<IconAlertTriangle size={16} />} mt="sm" p="xs" data-testid="deployment-no-videowall">
                <Text size="xs">{t('deployments.form.videowall_rdp')}</Text>
              </Alert>
            )}
          </Card>
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb={4}>
              {t('deployments.form.step_hardware')}
            </Title>
            <Text size="sm" c="dimmed" mb="md">
              {t('deployments.form.step_hardware_hint')}
            </Text>
            {props.allowed ? (
              <Stack gap="lg">
                <HardwareSteps value={{ ...choices.hw, disk_size: 1 }} onChange={(v) => onChoices({ ...choices, hw: { vcpus: v.vcpus, memory: v.memory } })} quota={props.allowed.quota} showDisk={false} disabled={props.disabled} />
                <GpuVideoFields
                  allowed={props.allowed}
                  value={choices.gpuVideo}
                  onChange={(gpuVideo) => {
                    onChoices({ ...choices, gpuVideo });
                    props.setViewerError(null);
                  }}
                  viewers={choices.guest.viewers}
                  disabled={props.disabled}
                  testId="deployment-form"
                />
              </Stack>
            ) : (
              <Skeleton h={120} />
            )}
          </Card>
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb="md">
              {t('deployments.form.step_options')}
            </Title>
            <Stack gap="lg">
              <Switch
                checked={choices.recreate}
                onChange={(e) => onChoices({ ...choices, recreate: e.currentTarget.checked })}
                label={t('deployments.form.recreate')}
                description={t('deployments.form.recreate_hint')}
                disabled={props.disabled}
                data-testid="deployment-form-recreate"
              />
              {props.withVisible && (
                <Switch
                  checked={choices.visible}
                  onChange={(e) => onChoices({ ...choices, visible: e.currentTarget.checked })}
                  label={t('deployments.form.visible')}
                  description={t('deployments.form.visible_hint')}
                  disabled={props.disabled}
                  data-testid="deployment-form-visible"
                />
              )}
            </Stack>
          </Card>
        </SimpleGrid>
        {props.after}
      </Stack>
      <Group className={classes.actionBar} justify="space-between" wrap="wrap" gap="sm">
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <ThemeIcon variant="light" radius="md" size={34}>
            <IconUsersGroup size={18} />
          </ThemeIcon>
          <div style={{ minWidth: 0 }}>{props.summary}</div>
        </Group>
        <Group gap="sm">
          <Button variant="default" onClick={props.onCancel}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" leftSection={props.submitIcon} loading={props.busy} disabled={props.disabled} data-testid="deployment-form-submit">
            {props.submitLabel}
          </Button>
        </Group>
      </Group>
    </form>
  );
}
