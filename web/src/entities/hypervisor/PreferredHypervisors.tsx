import { useState } from 'react';
import { Button, Card, Group, MultiSelect, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconDeviceFloppy, IconServer } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminHypervisor, TPreferredHypervisors } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { userQuery } from '../../lib/queries';
import { useBuiltInText } from '../../lib/built-in-text';
import { hypervisorsQuery, preferredBody, preferredKey, preferredQuery, savePreferred, type PreferredKind } from './api';

/**
 * "Preferred hypervisors" of a template or a deployment (the original's forced_hyp / favourite_hyp),
 * saved on its own through the admins' route. Shown to admins only: for anyone else it renders nothing
 * and asks the server nothing.
 */
export function PreferredHypervisorsCard({ kind, id }: { kind: PreferredKind; id: string }) {
  const { data: me } = useQuery(userQuery);
  if (me?.role !== 'admin') return null;
  return <AdminPreferred kind={kind} id={id} />;
}

function AdminPreferred({ kind, id }: { kind: PreferredKind; id: string }) {
  const { t } = useTranslation();
  const hosts = useQuery(hypervisorsQuery);
  const current = useQuery(preferredQuery(kind, id));
  return (
    <Card withBorder padding="lg" radius="lg" data-testid="preferred-hypervisors">
      <Group gap="sm" mb={4} wrap="nowrap">
        <IconServer size={20} />
        <Title order={2} size="h4">
          {t('preferred_hypervisors.title')}
        </Title>
      </Group>
      <Text size="sm" c="dimmed" mb="md">
        {t(`preferred_hypervisors.hint_${kind}`)}
      </Text>
      {hosts.data && current.data ? (
        <PreferredForm key={JSON.stringify(current.data)} kind={kind} id={id} hosts={hosts.data.items} stored={current.data} />
      ) : (
        <Skeleton h={120} radius="md" />
      )}
    </Card>
  );
}

function PreferredForm({ kind, id, hosts, stored }: { kind: PreferredKind; id: string; hosts: TAdminHypervisor[]; stored: TPreferredHypervisors }) {
  const { t } = useTranslation();
  const bt = useBuiltInText();
  const qc = useQueryClient();
  const known = hosts.map((h) => h.id);
  const [forced, setForced] = useState(() => stored.forced_hyp.filter((x) => known.includes(x)));
  const [favourite, setFavourite] = useState(() => stored.favourite_hyp.filter((x) => known.includes(x)));
  const data = hosts.map((h) => ({ value: h.id, label: bt(h.name) }));
  const body = preferredBody(forced, favourite, known);
  const changed = JSON.stringify(body) !== JSON.stringify(stored);
  const save = useMutation({
    mutationFn: () => savePreferred(kind, id, body),
    onSuccess: (saved) => {
      qc.setQueryData(preferredKey(kind, id), saved);
      notifySuccess(t('preferred_hypervisors.saved'));
    },
    onError: (err) => handleError(err),
  });
  return (
    <Stack gap="md">
      <MultiSelect
        label={t('preferred_hypervisors.forced')}
        description={t('preferred_hypervisors.forced_hint')}
        placeholder={forced.length ? undefined : t('preferred_hypervisors.any')}
        data={data}
        value={forced}
        onChange={(v) => {
          setForced(v);
          setFavourite((f) => f.filter((x) => !v.includes(x)));
        }}
        clearable
        searchable
        comboboxProps={{ withinPortal: true }}
        data-testid="preferred-forced"
      />
      <MultiSelect
        label={t('preferred_hypervisors.favourite')}
        description={t('preferred_hypervisors.favourite_hint')}
        placeholder={favourite.length ? undefined : t('preferred_hypervisors.none')}
        data={data.filter((d) => !forced.includes(d.value))}
        value={favourite.filter((x) => !forced.includes(x))}
        onChange={setFavourite}
        clearable
        searchable
        comboboxProps={{ withinPortal: true }}
        data-testid="preferred-favourite"
      />
      <Group justify="flex-end">
        <Button leftSection={<IconDeviceFloppy size={16} />} onClick={() => save.mutate()} disabled={!changed} loading={save.isPending} data-testid="preferred-save">
          {t('preferred_hypervisors.save')}
        </Button>
      </Group>
    </Stack>
  );
}
