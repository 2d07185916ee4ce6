import { useReducer, useState } from 'react';
import { useNavigate } from 'react-router';
import { Stack, Text } from '@mantine/core';
import { modals } from '../../lib/modals';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { desktopState, offeredAction, type TDesktop, type TDesktopAction, type TViewer } from '@vdi/contracts';
import { handleError, notifySuccess, notifyWithUndo } from '../../lib/error-handler';
import { DeleteForGood } from '../../components/DeleteForGood';
import { openViewer } from '../viewer/open';
import { deleteDesktop, desktopCall, DESKTOPS_KEY, fetchViewer, runAction, undoDelete } from './api';
import { isStartRefusal, openStartDialog } from './StartNowDialog';
import { heldBy, openQuotaHeldDialog } from './QuotaHeldDialog';
import type { HttpError } from '../../lib/api';
import { availableViewers, canOpen, chosenViewer, rememberViewer, removeDesktop, withStatus } from './logic';
import { builtInText } from '../../lib/built-in-text';

/** Everything one desktop offers, for its card or its table row. */
export function useDesktopControls(d: TDesktop) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const state = desktopState(d.state);
  const action = offeredAction(state, d.type === 'persistent');
  const viewers = canOpen(state) ? availableViewers(d) : [];
  // The choice lives in localStorage; a new choice re-renders so the main button follows it.
  const [, choiceChanged] = useReducer((n: number) => n + 1, 0);
  const viewer = chosenViewer(d.id, viewers);

  // A desktop that needs a booking and has none now: the start-now or cannot-start dialog.
  const actionFailed = (err: unknown) => {
    if (isStartRefusal(err)) return openStartDialog(d, err, (to) => void navigate(to));
    // Over the person's own quota: one dialog naming the running desktops that hold it, each with its stop.
    const held = heldBy(err);
    if (held) return openQuotaHeldDialog(err as HttpError, held);
    handleError(err);
  };

  const main = useMutation({
    mutationFn: (v: { action: TDesktopAction; from: string }) => runAction(d, v.action),
    onSuccess: (status, v) => {
      if (v.action === 'delete') {
        qc.setQueryData<TDesktop[]>(DESKTOPS_KEY, (l) => removeDesktop(l, d.id));
        notifySuccess(t('desktops.notify.deleted', { name: builtInText(t, d.name) }));
      } else if (status) qc.setQueryData<TDesktop[]>(DESKTOPS_KEY, (l) => withStatus(l, d.id, status, v.from));
    },
    onError: actionFailed,
  });

  // One click from rest to the screen: the start, then the browser viewer's ticket at once (the server gives it while the
  // desktop starts and holds the viewer's connection until its machine runs).
  const canStartAndOpen = action === 'start' && d.viewers.includes('browser-vnc');
  const startAndOpen = useMutation({
    mutationFn: () =>
      openViewer('browser-vnc', async () => {
        const status = await runAction(d, 'start');
        if (status) qc.setQueryData<TDesktop[]>(DESKTOPS_KEY, (l) => withStatus(l, d.id, status, d.state));
        return fetchViewer(d.id, 'browser-vnc');
      }),
    onError: actionFailed,
  });

  const reset = useMutation({
    mutationFn: () => desktopCall('reset', d.id),
    onSuccess: () => notifySuccess(t('desktops.notify.reset', { name: builtInText(t, d.name) })),
    onError: (err) => handleError(err),
  });

  const remove = useMutation({
    mutationFn: (permanent: boolean) => deleteDesktop(d, permanent),
    onSuccess: ({ recycleBinId }) => {
      qc.setQueryData<TDesktop[]>(DESKTOPS_KEY, (l) => removeDesktop(l, d.id));
      const name = builtInText(t, d.name);
      if (!recycleBinId) return notifySuccess(t('desktops.notify.deleted', { name }));
      // It went to the recycle bin: the notice offers it back at once.
      notifyWithUndo(t('desktops.notify.deleted', { name }), t('desktops.notify.undo'), async () => {
        try {
          await undoDelete(recycleBinId);
          await qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
          notifySuccess(t('desktops.notify.restored', { name }));
        } catch (err) {
          handleError(err);
        }
      });
    },
    onError: (err) => handleError(err),
  });

  const open = useMutation({
    mutationFn: (v: TViewer) => openViewer(v, () => fetchViewer(d.id, v)),
    onError: (err) => handleError(err),
  });

  const confirm = (opts: { title: string; body: string; label: string; onConfirm: () => void; testId: string }) =>
    modals.openConfirmModal({
      title: opts.title,
      centered: true,
      children: <Text size="sm">{opts.body}</Text>,
      labels: { confirm: opts.label, cancel: t('common.cancel') },
      confirmProps: { color: 'red', 'data-testid': `confirm-${opts.testId}` },
      cancelProps: { 'data-testid': `cancel-${opts.testId}` },
      onConfirm: opts.onConfirm,
    });

  return {
    state,
    action,
    viewers,
    viewer,
    busy: main.isPending || reset.isPending || remove.isPending,
    canStartAndOpen,
    startingToOpen: startAndOpen.isPending,
    startAndOpen: () => startAndOpen.mutate(),
    opening: open.isPending ? open.variables : null,
    runMain() {
      if (!action) return;
      if (action === 'delete') {
        confirm({
          title: t('desktops.confirm.delete_temporary_title'),
          body: t('desktops.confirm.delete_temporary_body', { name: builtInText(t, d.name) }),
          label: t('desktops.actions.delete'),
          testId: 'delete',
          onConfirm: () => main.mutate({ action: 'delete', from: d.state }),
        });
      } else main.mutate({ action, from: d.state });
    },
    canReset: state === 'started' || state === 'waitingip',
    reset() {
      confirm({
        title: t('desktops.confirm.reset_title'),
        body: t('desktops.confirm.reset_body', { name: builtInText(t, d.name) }),
        label: t('desktops.actions.reset'),
        testId: 'reset',
        onConfirm: () => reset.mutate(),
      });
    },
    canDelete: state === 'stopped' || state === 'failed',
    remove() {
      // A persistent desktop of the user's own may skip the recycle bin (a deployment's never goes there).
      const choice = { permanent: false };
      if (d.type === 'persistent' && d.tag === false) {
        modals.openConfirmModal({
          title: t('desktops.confirm.delete_title'),
          centered: true,
          children: <DeleteDesktopBody name={builtInText(t, d.name)} onChange={(v) => (choice.permanent = v)} />,
          labels: { confirm: t('desktops.actions.delete'), cancel: t('common.cancel') },
          confirmProps: { color: 'red', 'data-testid': 'confirm-delete' },
          cancelProps: { 'data-testid': 'cancel-delete' },
          onConfirm: () => remove.mutate(choice.permanent),
        });
        return;
      }
      confirm({
        title: t('desktops.confirm.delete_title'),
        body: t(d.type === 'persistent' ? 'desktops.confirm.delete_body' : 'desktops.confirm.delete_temporary_body', { name: builtInText(t, d.name) }),
        label: t('desktops.actions.delete'),
        testId: 'delete',
        onConfirm: () => remove.mutate(false),
      });
    },
    open(v: TViewer, remember = false) {
      if (remember) {
        rememberViewer(d.id, v);
        choiceChanged();
      }
      open.mutate(v);
    },
  };
}

export type DesktopControls = ReturnType<typeof useDesktopControls>;

/** A persistent desktop's delete dialog: what happens follows the "delete for good" choice. */
function DeleteDesktopBody({ name, onChange }: { name: string; onChange: (permanent: boolean) => void }) {
  const { t } = useTranslation();
  const [permanent, setPermanent] = useState(false);
  return (
    <Stack gap="sm">
      <Text size="sm" data-testid="delete-body">
        {t(permanent ? 'desktops.confirm.delete_for_good_body' : 'desktops.confirm.delete_body', { name })}
      </Text>
      <DeleteForGood
        onChange={(v) => {
          setPermanent(v);
          onChange(v);
        }}
      />
    </Stack>
  );
}
