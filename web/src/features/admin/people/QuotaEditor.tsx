import { NumberInput, SimpleGrid, Stack, Switch, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { QUOTA_FIELDS, type TLimits, type TQuota } from '@vdi/contracts';
import '../../../i18n/areas/admin';

type Kind = 'quota' | 'limits';
const FIELDS = (kind: Kind) => (kind === 'limits' ? (['users', ...QUOTA_FIELDS] as const) : QUOTA_FIELDS);

/** Starting values when a level starts to set its own: generous, a person lowers what matters. */
export function defaultsOf(kind: Kind): TQuota | TLimits {
  const base = Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 0])) as TQuota;
  Object.assign(base, { desktops: 5, volatile: 2, templates: 2, isos: 2, deployments_total: 5, deployment_desktops: 50, started_deployment_desktops: 5, running: 2, memory: 8, vcpus: 4, desktops_disk_size: 50, total_size: 100, total_soft_size: 80, storage_size: 50, media_size: 20, personal_drive: 0 });
  return kind === 'limits' ? { ...base, users: 100 } : base;
}

/**
 * Quota (per user of the level) or limits (totals of a group or category, with a `users` count).
 * Off = null: the level sets nothing and the next one applies (user → group → category).
 */
export function QuotaEditor<T extends TQuota | TLimits>({ kind, value, onChange, testId }: { kind: Kind; value: T | null; onChange: (v: T | null) => void; testId: string }) {
  const { t } = useTranslation();
  return (
    <Stack gap="xs" data-testid={testId}>
      <Switch
        checked={value !== null}
        onChange={(e) => onChange(e.currentTarget.checked ? (defaultsOf(kind) as T) : null)}
        label={t(`admin.quota.${kind}_on`)}
        description={t(`admin.quota.${kind}_hint`)}
        data-testid={`${testId}-toggle`}
      />
      {value === null ? (
        <Text size="sm" c="dimmed">
          {t(`admin.quota.${kind}_inherited`)}
        </Text>
      ) : (
        <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs">
          {FIELDS(kind).map((f) => (
            <NumberInput
              key={f}
              size="xs"
              min={0}
              label={t(`admin.quota.fields.${f}`)}
              value={(value as Record<string, number>)[f] ?? 0}
              onChange={(v) => onChange({ ...value, [f]: typeof v === 'number' ? v : Number(v) || 0 })}
              data-testid={`${testId}-${f}`}
            />
          ))}
        </SimpleGrid>
      )}
    </Stack>
  );
}
