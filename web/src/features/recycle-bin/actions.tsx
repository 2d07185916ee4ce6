import { Text } from '@mantine/core';
import { modals } from '../../lib/modals';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { TRecycleBinItem } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { BIN_COUNT_KEY, BIN_KEY, deleteEntry, emptyBin, restoreEntry } from './api';
import { applyStatus } from './logic';
import { builtInText } from '../../lib/built-in-text';

type Entry = Pick<TRecycleBinItem, 'id' | 'item_name'>;

/** Restore, delete for good and empty the bin, each confirmed, with their notices. */
export function useBinActions(opts: { afterRestore?: () => void; afterDelete?: () => void } = {}) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const gone = (id: string, status: string) => {
    qc.setQueryData<TRecycleBinItem[]>(BIN_KEY, (l) => applyStatus(l, { id, status }));
    void qc.invalidateQueries({ queryKey: BIN_COUNT_KEY, exact: true });
    void qc.invalidateQueries({ queryKey: ['recycle_bin', 'entry', id], exact: true });
  };

  const restore = useMutation({
    mutationFn: (e: Entry) => restoreEntry(e.id),
    onSuccess: (_r, e) => {
      gone(e.id, 'restored');
      void qc.invalidateQueries({ queryKey: ['desktops'], exact: true });
      void qc.invalidateQueries({ queryKey: ['user'], exact: true });
      notifySuccess(t('recycle_bin.notify.restored', { name: builtInText(t, e.item_name) }));
      opts.afterRestore?.();
    },
    onError: (err) => handleError(err),
  });

  const remove = useMutation({
    mutationFn: (e: Entry) => deleteEntry(e.id),
    onSuccess: (_r, e) => {
      gone(e.id, 'deleted');
      void qc.invalidateQueries({ queryKey: ['user'], exact: true });
      notifySuccess(t('recycle_bin.notify.deleted', { name: builtInText(t, e.item_name) }));
      opts.afterDelete?.();
    },
    onError: (err) => handleError(err),
  });

  const empty = useMutation({
    mutationFn: () => emptyBin(),
    onSuccess: () => {
      qc.setQueryData<TRecycleBinItem[]>(BIN_KEY, []);
      void qc.invalidateQueries({ queryKey: BIN_KEY, exact: true });
      void qc.invalidateQueries({ queryKey: BIN_COUNT_KEY, exact: true });
      void qc.invalidateQueries({ queryKey: ['user'], exact: true });
      notifySuccess(t('recycle_bin.notify.emptied'));
    },
    onError: (err) => handleError(err),
  });

  const confirm = (o: { title: string; body: string; label: string; testId: string; color?: string; onConfirm: () => void }) =>
    modals.openConfirmModal({
      title: o.title,
      centered: true,
      children: <Text size="sm">{o.body}</Text>,
      labels: { confirm: o.label, cancel: t('common.cancel') },
      confirmProps: { color: o.color ?? 'red', 'data-testid': `confirm-${o.testId}` },
      cancelProps: { 'data-testid': `cancel-${o.testId}` },
      onConfirm: o.onConfirm,
    });

  return {
    busy: (id: string) => (restore.isPending && restore.variables?.id === id) || (remove.isPending && remove.variables?.id === id),
    restoring: (id: string) => restore.isPending && restore.variables?.id === id,
    deleting: (id: string) => remove.isPending && remove.variables?.id === id,
    emptying: empty.isPending,
    // Restoring asks first, from the list and from an entry's page alike.
    restore: (e: Entry) =>
      confirm({
        title: t('recycle_bin.confirm.restore_title'),
        body: t('recycle_bin.confirm.restore_body', { name: builtInText(t, e.item_name) }),
        label: t('recycle_bin.actions.restore'),
        testId: 'bin-restore',
        color: 'teal',
        onConfirm: () => restore.mutate(e),
      }),
    remove: (e: Entry) =>
      confirm({
        title: t('recycle_bin.confirm.delete_title'),
        body: t('recycle_bin.confirm.delete_body', { name: builtInText(t, e.item_name) }),
        label: t('recycle_bin.actions.delete'),
        testId: 'bin-delete',
        onConfirm: () => remove.mutate(e),
      }),
    empty: (count: number) =>
      confirm({
        title: t('recycle_bin.confirm.empty_title'),
        body: t('recycle_bin.confirm.empty_body', { count }),
        label: t('recycle_bin.actions.empty'),
        testId: 'bin-empty',
        onConfirm: () => empty.mutate(),
      }),
  };
}
