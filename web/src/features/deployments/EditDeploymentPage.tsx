import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { Alert, Button, Card, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconDeviceFloppy, IconInfoCircle, IconUsersGroup } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDeploymentInfo } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { PageHeader } from '../../components/PageHeader';
import { hardwareAllowedQuery } from '../../entities/domain/api';
import { PreferredHypervisorsCard } from '../../entities/hypervisor/PreferredHypervisors';
import { deploymentInfoQuery, deploymentKey, deploymentQuery, DEPLOYMENTS_KEY, updateDeployment } from './api';
import { DeploymentForm, hardwareOf, type DeploymentChoices, type DeploymentTexts } from './DeploymentForm';
import { UsersModal } from './modals';
import { DeploymentNotFound } from './NotFound';
import { choicesFrom } from './NewDeploymentPage';
import '../../i18n/areas/deployments';
import { HANDLES_ERROR } from '../../lib/queries';

/** The chosen groups and users by name (an empty list is everyone), a few then "+N". */
function whoList(a: TDeploymentInfo['allowed'], everyone: string) {
  if ((a.groups !== false && a.groups.length === 0) || (a.users !== false && a.users.length === 0)) return everyone;
  const names = [...(a.groups || []), ...(a.users || [])].map((x) => x.name);
  return names.length > 4 ? `${names.slice(0, 4).join(', ')} +${names.length - 4}` : names.join(', ');
}

/** /deployment/{id}/edit: names, viewers, hardware and the students' rights; the users in a dialog. */
export default function EditDeploymentPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const { id = '' } = useParams();
  const info = useQuery({ ...deploymentInfoQuery(id), retry: false });
  const detail = useQuery({ ...deploymentQuery(id), retry: false, meta: HANDLES_ERROR });
  const allowedHw = useQuery(hardwareAllowedQuery);
  const [choices, setChoices] = useState<DeploymentChoices | null>(null);
  const [viewerError, setViewerError] = useState<string | null>(null);
  const [usersOpen, setUsersOpen] = useState(false);
  const quota = allowedHw.data?.quota;
  useEffect(() => {
    if (!info.data || !quota || choices) return;
    setChoices(choicesFrom(info.data, { memory: Math.max(quota.memory, info.data.hardware.memory), vcpus: Math.max(quota.vcpus, info.data.hardware.vcpus) }, { recreate: info.data.user_permissions.includes('recreate'), visible: info.data.visible }));
  }, [info.data, quota, choices]);
  const back = `/deployment/${encodeURIComponent(id)}`;

  const save = useMutation({
    mutationFn: (v: DeploymentTexts) =>
      updateDeployment(id, {
        ...v,
        hardware: hardwareOf(choices!),
        guest_properties: { viewers: Object.fromEntries(choices!.guest.viewers.map((x) => [x, { options: null }])), credentials: choices!.guest.credentials },
        user_permissions: choices!.recreate ? ['recreate'] : [],
      }),
    onSuccess: (_a, v) => {
      notifySuccess(t('deployments.edit.saved', { name: v.name }));
      void qc.invalidateQueries({ queryKey: deploymentKey(id) });
      void qc.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
      void qc.invalidateQueries({ queryKey: deploymentInfoQuery(id).queryKey });
      void navigate(back);
    },
    onError: (err) => handleError(err),
  });

  if (info.isError)
    return (
      <DeploymentNotFound />
    );
  const i = info.data;
  const started = detail.data?.startedDesktops ?? 0;
  return (
    <>
      <PageHeader title={t('deployments.edit.heading')} subtitle={i ? i.name : undefined} />
      {!i || !choices ? (
        <Stack gap="lg">
          <Skeleton h={120} radius="lg" />
          <Skeleton h={300} radius="lg" />
        </Stack>
      ) : (
        <DeploymentForm
          initial={{ name: i.name, description: i.description, desktop_name: i.desktop_name }}
          choices={choices}
          onChoices={setChoices}
          allowed={allowedHw.data}
          before={
            <Card withBorder padding="lg" radius="lg">
              <Group justify="space-between" gap="md" wrap="wrap">
                <div>
                  <Title order={2} size="h4" mb={4}>
                    {t('deployments.edit.users_heading')}
                  </Title>
                  <Text size="sm" c="dimmed" data-testid="deployment-edit-users-summary">
                    {t('deployments.edit.users_summary', { list: whoList(i.allowed, t('deployments.allowed.everyone')), template: i.template ?? t('deployments.card.template_gone') })}
                  </Text>
                </div>
                <Button variant="light" leftSection={<IconUsersGroup size={16} />} onClick={() => setUsersOpen(true)} disabled={!detail.data} data-testid="deployment-edit-users-open">
                  {t('deployments.detail.edit_users')}
                </Button>
              </Group>
              <Alert color={started ? 'orange' : 'blue'} variant="light" icon={<IconInfoCircle size={16} />} mt="md" p="xs">
                <Text size="xs">{t(started ? 'deployments.edit.applies_started' : 'deployments.edit.applies')}</Text>
              </Alert>
            </Card>
          }
          after={<PreferredHypervisorsCard kind="deployment" id={id} />}
          viewerError={viewerError}
          setViewerError={setViewerError}
          onSubmit={(v) => save.mutate(v)}
          onCancel={() => void navigate(back)}
          submitLabel={t('common.save')}
          submitIcon={<IconDeviceFloppy size={16} />}
          busy={save.isPending}
          summary={
            <>
              <Text size="sm" fw={600} lineClamp={1}>
                {i.name}
              </Text>
              <Text size="xs" c="dimmed">
                {t('deployments.new.summary', { vcpus: choices.hw.vcpus, memory: choices.hw.memory })}
              </Text>
            </>
          }
        />
      )}
      {detail.data && <UsersModal d={detail.data} opened={usersOpen} onClose={() => setUsersOpen(false)} />}
    </>
  );
}
