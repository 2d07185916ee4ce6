import { Text } from '@mantine/core';
import { modals } from '../../lib/modals';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { recreateDisk } from './api';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

/**
 * Recreating a stopped desktop's disk (POST /domain/{id}/recreate_disk) after a confirmation:
 * the disk starts over from the template and everything saved on it is lost.
 */
export function useRecreateDisk(d: { id: string; name: string }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const recreate = useMutation({
    mutationFn: () => recreateDisk(d.id),
    onSuccess: () => {
      notifySuccess(t('domain_edit.recreated', { name: builtInText(t, d.name) }));
      void qc.invalidateQueries({ queryKey: ['desktops'] });
    },
    onError: (err) => handleError(err),
  });
  const confirm = () =>
    modals.openConfirmModal({
      title: t('domain_edit.recreate_title'),
      centered: true,
      children: <Text size="sm">{t('domain_edit.recreate_body', { name: builtInText(t, d.name) })}</Text>,
      labels: { confirm: t('domain_edit.recreate'), cancel: t('common.cancel') },
      confirmProps: { color: 'red', 'data-testid': 'confirm-recreate' },
      onConfirm: () => recreate.mutate(),
    });
  return { confirm, pending: recreate.isPending };
}
