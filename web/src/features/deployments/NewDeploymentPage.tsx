import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { Alert, Badge, Button, Card, Group, Modal, Select, SimpleGrid, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconDeviceDesktop, IconTemplate, IconUsersGroup, IconUsersPlus } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_VIDEO, deploymentHasUsers, MEMORY_STEP_GB, type TDomainInfo, type TTemplateAllowed } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { domainInfoQuery, hardwareAllowedQuery, templatesForNewQuery } from '../../entities/domain/api';
import { guestNetOf } from '../../entities/domain/fields';
import { SharingPicker } from '../../entities/sharing/SharingPicker';
import { checkDeploymentQuota, countUsers, createDeployment, DEPLOYMENTS_KEY } from './api';
import { DeploymentForm, hardwareOf, type DeploymentChoices, type DeploymentTexts } from './DeploymentForm';
import '../../i18n/areas/deployments';
import { builtInText } from '../../lib/built-in-text';

const NOBODY: TTemplateAllowed = { roles: false, categories: false, groups: false, users: false };

/** The template's hardware, GPU profile and viewers, within what this user may choose. */
export function choicesFrom(info: { hardware: Pick<TDomainInfo['hardware'], 'vcpus' | 'memory' | 'interfaces' | 'videos'>; reservables: TDomainInfo['reservables']; guest_properties: TDomainInfo['guest_properties'] }, quota: { memory: number; vcpus: number }, keep: Pick<DeploymentChoices, 'recreate' | 'visible'>): DeploymentChoices {
  const maxMem = Math.floor(quota.memory / MEMORY_STEP_GB) * MEMORY_STEP_GB;
  return {
    ...keep,
    hw: {
      vcpus: Math.max(1, Math.min(info.hardware.vcpus, Math.floor(quota.vcpus))),
      memory: info.hardware.memory > quota.memory ? Math.max(MEMORY_STEP_GB, maxMem) : info.hardware.memory,
    },
    gpuVideo: { gpu: info.reservables.vgpus?.[0] ?? null, video: info.hardware.videos[0] ?? DEFAULT_VIDEO },
    guest: guestNetOf(info),
  };
}

type Pending = { texts: DeploymentTexts; count: number };

/** /deployments/new: a template, the users and groups, the desktops' settings; a confirmation with the count. */
export default function NewDeploymentPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [params] = useSearchParams();
  const templates = useQuery(templatesForNewQuery);
  const allowedHw = useQuery(hardwareAllowedQuery);
  const [templateId, setTemplateId] = useState<string | null>(params.get('template'));
  const info = useQuery({ ...domainInfoQuery(templateId ?? ''), enabled: Boolean(templateId) });
  const [allowed, setAllowed] = useState<TTemplateAllowed>(NOBODY);
  const [usersError, setUsersError] = useState<string | null>(null);
  const [viewerError, setViewerError] = useState<string | null>(null);
  const [choices, setChoices] = useState<DeploymentChoices>({ guest: { viewers: ['browser_vnc'], interfaces: ['default'], credentials: { username: '', password: '' } }, hw: { vcpus: 1, memory: 1 }, gpuVideo: { gpu: null, video: DEFAULT_VIDEO }, recreate: false, visible: true });
  const [pending, setPending] = useState<Pending | null>(null);
  const [counting, setCounting] = useState(false);

  const quota = allowedHw.data?.quota;
  useEffect(() => {
    if (!info.data || !quota) return;
    setChoices((c) => choicesFrom(info.data, quota, c));
    setViewerError(null);
  }, [info.data, quota]);
  const list = useMemo(() => templates.data ?? [], [templates.data]);
  useEffect(() => {
    if (!templateId && list.length === 1) setTemplateId(list[0]!.id);
  }, [templateId, list]);
  const template = list.find((x) => x.id === templateId) ?? null;

  const create = useMutation({
    mutationFn: async (p: Pending) => {
      await checkDeploymentQuota({ groups: allowed.groups, users: allowed.users });
      return createDeployment({
        name: p.texts.name,
        description: p.texts.description,
        desktop_name: p.texts.desktop_name,
        template_id: templateId!,
        visible: choices.visible,
        allowed: { groups: allowed.groups, users: allowed.users },
        hardware: hardwareOf(choices),
        guest_properties: { viewers: Object.fromEntries(choices.guest.viewers.map((v) => [v, { options: null }])), credentials: choices.guest.credentials },
        user_permissions: choices.recreate ? ['recreate'] : [],
      });
    },
    onSuccess: ({ id }, p) => {
      setPending(null);
      notifySuccess(t('deployments.new.created', { name: p.texts.name }));
      void qc.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
      void navigate(`/deployment/${encodeURIComponent(id)}`);
    },
    onError: (err) => {
      setPending(null);
      handleError(err);
    },
  });

  /** The form is valid: count the desktops, then ask. */
  const confirm = async (texts: DeploymentTexts) => {
    if (!deploymentHasUsers(allowed)) return setUsersError(t('deployments.new.users_required'));
    setCounting(true);
    try {
      setPending({ texts, count: await countUsers({ groups: allowed.groups, users: allowed.users }) });
    } catch (err) {
      handleError(err);
    } finally {
      setCounting(false);
    }
  };

  const templateStep = (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
      <Card withBorder padding="lg" radius="lg">
        <Title order={2} size="h4" mb={4}>
          {t('deployments.new.step_template')}
        </Title>
        <Text size="sm" c="dimmed" mb="md">
          {t('deployments.new.step_template_hint')}
        </Text>
        {templates.isLoading ? (
          <Skeleton h={36} />
        ) : !list.length ? (
          <EmptyState icon={<IconTemplate size={30} />} title={t('deployments.new.no_templates_title')} body={t('deployments.new.no_templates_body')} />
        ) : (
          <Select
            label={t('deployments.new.template')}
            placeholder={t('deployments.new.template_placeholder')}
            data={list.map((x) => ({ value: x.id, label: builtInText(t, x.name) }))}
            value={templateId}
            onChange={setTemplateId}
            searchable
            nothingFoundMessage={t('deployments.new.no_match')}
            required
            data-testid="deployment-template"
            comboboxProps={{ withinPortal: true }}
          />
        )}
        {template && (
          <Group gap="md" mt="md" wrap="nowrap" align="flex-start" data-testid="deployment-template-preview">
            <img src={template.image.url} alt="" style={{ width: 120, aspectRatio: '16 / 9', objectFit: 'cover', borderRadius: 8, flex: '0 0 auto' }} />
            <Stack gap={4} style={{ minWidth: 0 }}>
              <Text fw={600} size="sm" lineClamp={1}>
                {builtInText(t, template.name)}
              </Text>
              <Text size="xs" c="dimmed" lineClamp={2}>
                {builtInText(t, template.description) || t('deployments.no_description')}
              </Text>
              <Badge variant="light" color="gray" size="xs" radius="sm" style={{ alignSelf: 'flex-start', textTransform: 'none' }}>
                {t('deployments.new.by', { name: template.user_name })}
              </Badge>
            </Stack>
          </Group>
        )}
      </Card>
      <Card withBorder padding="lg" radius="lg">
        <Title order={2} size="h4" mb={4}>
          {t('deployments.new.step_users')}
        </Title>
        <Text size="sm" c="dimmed" mb="md">
          {t('deployments.new.step_users_hint')}
        </Text>
        <SharingPicker
          value={allowed}
          onChange={(a) => {
            setAllowed(a);
            setUsersError(null);
          }}
          ns="deployments.allowed"
        />
        {usersError && (
          <Text size="xs" c="red" mt="xs" data-testid="deployment-users-error">
            {usersError}
          </Text>
        )}
      </Card>
    </SimpleGrid>
  );

  return (
    <>
      <PageHeader title={t('deployments.new.heading')} subtitle={t('deployments.new.subheading')} />
      <DeploymentForm
        initial={{ name: '', description: '', desktop_name: '' }}
        choices={choices}
        onChoices={setChoices}
        allowed={allowedHw.data}
        before={templateStep}
        withVisible
        viewerError={viewerError}
        setViewerError={setViewerError}
        onSubmit={(v) => void confirm(v)}
        onCancel={() => void navigate('/deployments')}
        submitLabel={t('deployments.new.submit')}
        submitIcon={<IconUsersPlus size={16} />}
        busy={counting || create.isPending}
        disabled={!templateId || !info.data}
        summary={
          <>
            <Text size="sm" fw={600} lineClamp={1} data-testid="deployment-summary">
              {template ? builtInText(t, template.name) : t('deployments.new.pick_first')}
            </Text>
            {template && (
              <Text size="xs" c="dimmed">
                {t('deployments.new.summary', { vcpus: choices.hw.vcpus, memory: choices.hw.memory })}
              </Text>
            )}
          </>
        }
      />
      <Modal opened={pending !== null} onClose={() => !create.isPending && setPending(null)} title={t('deployments.confirm.title')} centered radius="lg" data-testid="deployment-confirm">
        {pending && (
          <Stack gap="md">
            <Group gap="md" wrap="nowrap">
              <ThemeIcon size={48} radius="xl" variant="light" color={pending.count ? 'indigo' : 'orange'}>
                {pending.count ? <IconDeviceDesktop size={26} /> : <IconAlertTriangle size={26} />}
              </ThemeIcon>
              <div>
                <Text fw={650} size="lg" data-testid="deployment-confirm-count" data-count={pending.count}>
                  {t('deployments.confirm.count', { count: pending.count })}
                </Text>
                <Text size="sm" c="dimmed">
                  {t('deployments.confirm.body', { name: pending.texts.name, template: builtInText(t, template?.name ?? '') })}
                </Text>
              </div>
            </Group>
            {pending.count === 0 && (
              <Alert color="orange" variant="light" icon={<IconUsersGroup size={16} />}>
                {t('deployments.confirm.nobody')}
              </Alert>
            )}
            {!choices.visible && pending.count > 0 && (
              <Text size="xs" c="dimmed">
                {t('deployments.confirm.hidden')}
              </Text>
            )}
            <Group justify="flex-end" gap="sm">
              <Button variant="default" onClick={() => setPending(null)} disabled={create.isPending}>
                {t('common.cancel')}
              </Button>
              <Button onClick={() => create.mutate(pending)} loading={create.isPending} disabled={pending.count === 0} leftSection={<IconUsersPlus size={16} />} data-testid="deployment-confirm-create">
                {t('deployments.confirm.create', { count: pending.count })}
              </Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </>
  );
}
