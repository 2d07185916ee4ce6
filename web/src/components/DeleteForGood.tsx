import { useEffect, useRef, useState } from 'react';
import { Checkbox, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { cutoffQuery, defaultDeleteQuery } from '../lib/queries';

/**
 * The "delete for good" choice of a delete dialog (spec 001 §7): checked by default as the portal
 * is set (`GET /recycle_bin/config/default-delete`). Where the recycle bin keeps nothing (maximum
 * recycle time 0) deleting is for good anyway, and this says so instead.
 */
export function DeleteForGood({ onChange }: { onChange: (permanent: boolean) => void }) {
  const { t } = useTranslation();
  const cutoff = useQuery(cutoffQuery);
  const byDefault = useQuery(defaultDeleteQuery);
  const [touched, setTouched] = useState(false);
  const [checked, setChecked] = useState(false);
  const report = useRef(onChange);
  report.current = onChange;
  useEffect(() => {
    if (touched || byDefault.data === undefined) return;
    setChecked(byDefault.data);
    report.current(byDefault.data);
  }, [byDefault.data, touched]);
  if (cutoff.data === 0) {
    return (
      <Text size="sm" c="dimmed" data-testid="delete-for-good-always">
        {t('delete_for_good.always')}
      </Text>
    );
  }
  return (
    <Checkbox
      checked={checked}
      onChange={(e) => {
        const v = e.currentTarget.checked;
        setTouched(true);
        setChecked(v);
        report.current(v);
      }}
      disabled={byDefault.isLoading}
      label={t('delete_for_good.label')}
      description={t('delete_for_good.hint')}
      color="red"
      data-testid="delete-for-good"
    />
  );
}
