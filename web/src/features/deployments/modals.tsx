import { useEffect, useState } from 'react';
import { Alert, Button, Checkbox, Group, Modal, Skeleton, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconDownload, IconEyeOff, IconPlayerStop, IconRefresh, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DeleteForGood } from '../../components/DeleteForGood';
import { deploymentHasUsers, type TDeployment, type TTemplateAllowed } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { AllowedSearch, SharingPicker } from '../../entities/sharing/SharingPicker';
import {
  coOwnersQuery,
  deleteDeployment,
  deploymentInfoQuery,
  deploymentKey,
  DEPLOYMENTS_KEY,
  downloadDirectViewerCsv,
  recreate,
  setCoOwners,
  toggleVisible,
  updateDeploymentUsers,
} from './api';
import '../../i18n/areas/deployments';

type ModalProps = { d: TDeployment; opened: boolean; onClose: () => void };

function useRefresh(id: string) {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: deploymentKey(id) });
    void qc.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
  };
}

/** Hiding asks whether the running desktops stop now or stay usable until they are stopped. */
export function HideModal({ d, opened, onClose }: ModalProps) {
  const { t } = useTranslation();
  const refresh = useRefresh(d.id);
  const hide = useMutation({
    mutationFn: (stop: boolean) => toggleVisible(d.id, stop),
    onSuccess: () => {
      notifySuccess(t('deployments.hide.done', { name: d.name }));
      refresh();
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.hide.title')} centered radius="lg" data-testid="deployment-hide-modal">
      <Stack gap="md">
        <Text size="sm">{t('deployments.hide.body')}</Text>
        {d.startedDesktops > 0 && (
          <Alert color="orange" variant="light" icon={<IconAlertTriangle size={16} />}>
            {t('deployments.hide.started', { count: d.startedDesktops })}
          </Alert>
        )}
        {d.startedDesktops > 0 ? (
          <Stack gap="xs">
            <Button fullWidth color="orange" leftSection={<IconPlayerStop size={16} />} loading={hide.isPending && hide.variables === true} disabled={hide.isPending} onClick={() => hide.mutate(true)} data-testid="deployment-hide-stop">
              {t('deployments.hide.stop')}
            </Button>
            <Button fullWidth variant="light" leftSection={<IconEyeOff size={16} />} loading={hide.isPending && hide.variables === false} disabled={hide.isPending} onClick={() => hide.mutate(false)} data-testid="deployment-hide-keep">
              {t('deployments.hide.keep')}
            </Button>
            <Button fullWidth variant="subtle" color="gray" onClick={onClose} disabled={hide.isPending}>
              {t('common.cancel')}
            </Button>
          </Stack>
        ) : (
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onClose} disabled={hide.isPending}>
              {t('common.cancel')}
            </Button>
            <Button leftSection={<IconEyeOff size={16} />} loading={hide.isPending} onClick={() => hide.mutate(false)} data-testid="deployment-hide-keep">
              {t('deployments.detail.hide')}
            </Button>
          </Group>
        )}
      </Stack>
    </Modal>
  );
}

export function RecreateModal({ d, opened, onClose }: ModalProps) {
  const { t } = useTranslation();
  const refresh = useRefresh(d.id);
  const run = useMutation({
    mutationFn: () => recreate(d.id),
    onSuccess: () => {
      notifySuccess(t('deployments.recreate.started'));
      refresh();
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.recreate.title')} centered radius="lg" data-testid="deployment-recreate-modal">
      <Stack gap="md">
        <Text size="sm">{t('deployments.recreate.body')}</Text>
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} disabled={run.isPending}>
            {t('common.cancel')}
          </Button>
          <Button leftSection={<IconRefresh size={16} />} loading={run.isPending} onClick={() => run.mutate()} data-testid="deployment-recreate-confirm">
            {t('deployments.recreate.confirm')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

export function CsvModal({ d, opened, onClose }: ModalProps) {
  const { t } = useTranslation();
  const [reset, setReset] = useState(false);
  const run = useMutation({
    mutationFn: () => downloadDirectViewerCsv(d.id, d.name, reset),
    onSuccess: () => {
      notifySuccess(t(reset ? 'deployments.csv.done_reset' : 'deployments.csv.done'));
      setReset(false);
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.csv.title')} centered radius="lg" data-testid="deployment-csv-modal">
      <Stack gap="md">
        <Text size="sm">{t('deployments.csv.body')}</Text>
        <Checkbox checked={reset} onChange={(e) => setReset(e.currentTarget.checked)} label={t('deployments.csv.reset')} description={t('deployments.csv.reset_hint')} data-testid="deployment-csv-reset" />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} disabled={run.isPending}>
            {t('common.cancel')}
          </Button>
          <Button leftSection={<IconDownload size={16} />} color={reset ? 'orange' : undefined} loading={run.isPending} onClick={() => run.mutate()} data-testid="deployment-csv-download">
            {t('deployments.csv.download')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Delete: the owner only, with every desktop stopped; the deployment goes to the recycle bin. */
export function DeleteModal({ d, opened, onClose, onDeleted }: ModalProps & { onDeleted: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [permanent, setPermanent] = useState(false);
  const run = useMutation({
    mutationFn: () => deleteDeployment(d.id, permanent),
    onSuccess: () => {
      notifySuccess(t(permanent ? 'deployments.delete.done_for_good' : 'deployments.delete.done', { name: d.name }));
      qc.setQueryData<TDeployment[]>(DEPLOYMENTS_KEY, (l) => (l ?? []).filter((x) => x.id !== d.id));
      qc.removeQueries({ queryKey: deploymentKey(d.id) });
      onClose();
      onDeleted();
    },
    onError: (err) => handleError(err),
  });
  const running = d.startedDesktops > 0;
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.delete.title')} centered radius="lg" data-testid="deployment-delete-modal">
      <Stack gap="md">
        <Text size="sm">{t(permanent ? 'deployments.delete.body_for_good' : 'deployments.delete.body', { name: d.name, count: d.totalDesktops })}</Text>
        {running && (
          <Alert color="orange" variant="light" icon={<IconAlertTriangle size={16} />} data-testid="deployment-delete-running">
            {t('errors.deployment_stop')}
          </Alert>
        )}
        {opened && <DeleteForGood onChange={setPermanent} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} disabled={run.isPending}>
            {t('common.cancel')}
          </Button>
          <Button color="red" leftSection={<IconTrash size={16} />} loading={run.isPending} disabled={running} onClick={() => run.mutate()} data-testid="deployment-delete-confirm">
            {t('deployments.delete.confirm')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The users and groups who have a desktop: new ones get one, removed ones lose theirs. */
export function UsersModal({ d, opened, onClose }: ModalProps) {
  const { t } = useTranslation();
  const refresh = useRefresh(d.id);
  const info = useQuery({ ...deploymentInfoQuery(d.id), enabled: opened });
  const [allowed, setAllowed] = useState<TTemplateAllowed | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!opened) return setAllowed(null);
    const a = info.data?.allowed;
    if (a && !allowed)
      setAllowed({ roles: false, categories: false, groups: a.groups === false ? false : a.groups.map((g) => g.id), users: a.users === false ? false : a.users.map((u) => u.id) });
  }, [opened, info.data, allowed]);
  const save = useMutation({
    mutationFn: (a: TTemplateAllowed) => updateDeploymentUsers(d.id, { groups: a.groups, users: a.users }),
    onSuccess: () => {
      notifySuccess(t('deployments.users.saved'));
      refresh();
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.users.title')} centered radius="lg" size="lg" data-testid="deployment-users-modal">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('deployments.users.body')}
        </Text>
        {allowed ? (
          <SharingPicker
            value={allowed}
            onChange={(a) => {
              setAllowed(a);
              setError(null);
            }}
            ns="deployments.allowed"
          />
        ) : (
          <Skeleton h={120} />
        )}
        {error && (
          <Text size="xs" c="red">
            {error}
          </Text>
        )}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} disabled={save.isPending}>
            {t('common.cancel')}
          </Button>
          <Button
            loading={save.isPending}
            disabled={!allowed}
            onClick={() => {
              if (!allowed) return;
              if (!deploymentHasUsers(allowed)) return setError(t('deployments.new.users_required'));
              save.mutate(allowed);
            }}
            data-testid="deployment-users-save"
          >
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Co-owners manage the deployment as the owner does, except changing owners and deleting it. */
export function CoOwnersModal({ d, opened, onClose }: ModalProps) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const refresh = useRefresh(d.id);
  const current = useQuery({ ...coOwnersQuery(d.id), enabled: opened });
  const [ids, setIds] = useState<string[] | null>(null);
  useEffect(() => {
    if (!opened) return setIds(null);
    if (current.data && ids === null) setIds(current.data.co_owners.map((c) => c.id));
  }, [opened, current.data, ids]);
  const save = useMutation({
    mutationFn: (co: string[]) => setCoOwners(d.id, co),
    onSuccess: () => {
      notifySuccess(t('deployments.co_owners.saved'));
      void qc.invalidateQueries({ queryKey: coOwnersQuery(d.id).queryKey });
      refresh();
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={opened} onClose={onClose} title={t('deployments.co_owners.title')} centered radius="lg" size="lg" data-testid="deployment-co-owners-modal">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('deployments.co_owners.body')}
        </Text>
        {current.data && (
          <Text size="sm">
            {t('deployments.co_owners.owner', { name: current.data.owner.name })}
          </Text>
        )}
        {ids ? <AllowedSearch table="users" value={ids} onChange={setIds} ns="deployments.co_owners" testId="deployment-co-owners-search" /> : <Skeleton h={36} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} disabled={save.isPending}>
            {t('common.cancel')}
          </Button>
          <Button loading={save.isPending} disabled={!ids} onClick={() => ids && save.mutate(ids)} data-testid="deployment-co-owners-save">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
