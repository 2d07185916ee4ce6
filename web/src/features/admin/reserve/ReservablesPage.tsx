import { useState, useLayoutEffect } from 'react';
import { Alert, Badge, Button, Group, NumberInput, Paper, Select, Skeleton, Stack, Switch, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertTriangle, IconCpu, IconEdit, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminCard, TAdminProfile } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { ConfirmDelete, fullBadge, RowAction, FormModal } from '../shared/console';
import { addProfile, cardsQuery, createCard, deleteCard, refreshReserve, removeProfile, updateCard, updateProfile, bookingRulesQuery } from './api';
import '../../../i18n/areas/admin-reserve';
import { CardTable } from '../../../components/CardTable';
import { builtInText } from '../../../lib/built-in-text';
import { HANDLES_ERROR } from '../../../lib/queries';
import { hypervisorsQuery } from '../../../entities/hypervisor/api';

type CardDraft = { name: string; brand: string; model: string; description: string; enabled: boolean; hypervisor_id: string };

function CardForm({ opened, onClose, card }: { opened: boolean; onClose: () => void; card: TAdminCard | null }) {
  const { t } = useTranslation();
  const [d, setD] = useState<CardDraft>({ name: '', brand: '', model: '', description: '', enabled: true, hypervisor_id: 'local' });
  const { busy, error, setError, run } = useAction();
  const hosts = useQuery({ ...hypervisorsQuery, enabled: opened });
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setD(
      card
        ? { name: card.name, brand: card.brand, model: card.model, description: card.description, enabled: card.enabled, hypervisor_id: card.hypervisor_id }
        : { name: '', brand: '', model: '', description: '', enabled: true, hypervisor_id: 'local' },
    );
  }, [opened, card, setError]);
  const save = () =>
    run(async () => {
      if (card) await updateCard(card.id, d);
      else await createCard(d);
      await refreshReserve();
      notifySuccess(t('admin_reserve.saved'));
      onClose();
    });
  return (
    <FormModal opened={opened} onClose={onClose} title={t(card ? 'admin_reserve.cards.edit_title' : 'admin_reserve.cards.new_title')} onSubmit={save} busy={busy} error={error} testId="card-form">
      <TextInput label={t('admin_reserve.cards.name')} placeholder="NVIDIA A40 #2" value={d.name} onChange={(e) => setD({ ...d, name: e.currentTarget.value })} required maxLength={100} data-testid="card-form-name" />
      <Group grow>
        <TextInput label={t('admin_reserve.cards.brand')} placeholder="NVIDIA" value={d.brand} onChange={(e) => setD({ ...d, brand: e.currentTarget.value })} maxLength={50} disabled={Boolean(card)} data-testid="card-form-brand" />
        <TextInput label={t('admin_reserve.cards.model')} placeholder="A40" value={d.model} onChange={(e) => setD({ ...d, model: e.currentTarget.value })} maxLength={50} disabled={Boolean(card)} data-testid="card-form-model" />
      </Group>
      <Textarea label={t('admin_reserve.cards.description')} value={d.description} onChange={(e) => setD({ ...d, description: e.currentTarget.value })} autosize minRows={2} maxLength={255} />
      <Select
        label={t('admin_reserve.cards.hypervisor')}
        description={t('admin_reserve.cards.hypervisor_hint')}
        data={(hosts.data?.items ?? [{ id: d.hypervisor_id, name: d.hypervisor_id }]).map((h) => ({ value: h.id, label: builtInText(t, h.name) }))}
        value={d.hypervisor_id}
        onChange={(v) => v && setD({ ...d, hypervisor_id: v })}
        allowDeselect={false}
        data-testid="card-form-hypervisor"
      />
      {card && <Switch label={t('admin_reserve.cards.enabled')} checked={d.enabled} onChange={(e) => setD({ ...d, enabled: e.currentTarget.checked })} />}
    </FormModal>
  );
}

type ProfileDraft = { profile: string; name: string; description: string; units: number | string; priority_id: string; enabled: boolean };

function ProfileForm({ opened, onClose, card, profile }: { opened: boolean; onClose: () => void; card: TAdminCard | null; profile: TAdminProfile | null }) {
  const { t } = useTranslation();
  const [d, setD] = useState<ProfileDraft>({ profile: '', name: '', description: '', units: 1, priority_id: '', enabled: true });
  const { busy, error, setError, run } = useAction();
  const rules = useQuery({ ...bookingRulesQuery(), enabled: opened, meta: HANDLES_ERROR });
  const ruleIds = [...new Set(['default', ...(rules.data?.items ?? []).map((r) => r.rule_id)])];
  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setError(null);
    setD(
      profile
        ? { profile: profile.profile, name: profile.name, description: profile.description, units: profile.units, priority_id: profile.priority_id || 'default', enabled: profile.enabled }
        : { profile: '', name: '', description: '', units: 1, priority_id: 'default', enabled: true },
    );
  }, [opened, profile, setError]);
  const save = () =>
    run(async () => {
      if (!card) return;
      const priority_id = d.priority_id === 'default' ? '' : d.priority_id;
      if (profile) await updateProfile(card.id, profile.id, { name: d.name, description: d.description, units: Number(d.units), priority_id, enabled: d.enabled });
      else await addProfile(card.id, { profile: d.profile.trim(), name: d.name, description: d.description, units: Number(d.units), priority_id });
      await refreshReserve();
      notifySuccess(t('admin_reserve.saved'));
      onClose();
    });
  return (
    <FormModal opened={opened} onClose={onClose} title={t(profile ? 'admin_reserve.profiles.edit_title' : 'admin_reserve.profiles.new_title', { card: card?.name ?? '' })} onSubmit={save} busy={busy} error={error} testId="profile-form">
      <TextInput
        label={t('admin_reserve.profiles.profile')}
        description={t('admin_reserve.profiles.profile_hint')}
        placeholder="2Q"
        value={d.profile}
        onChange={(e) => setD({ ...d, profile: e.currentTarget.value })}
        required
        maxLength={32}
        disabled={Boolean(profile)}
        data-testid="profile-form-profile"
      />
      <TextInput label={t('admin_reserve.profiles.name')} placeholder="NVIDIA A40 · 2 GB" value={d.name} onChange={(e) => setD({ ...d, name: e.currentTarget.value })} required maxLength={100} data-testid="profile-form-name" />
      <Textarea label={t('admin_reserve.profiles.description')} value={d.description} onChange={(e) => setD({ ...d, description: e.currentTarget.value })} autosize minRows={2} maxLength={255} />
      <Group grow align="flex-start">
        <NumberInput label={t('admin_reserve.profiles.units')} description={t('admin_reserve.profiles.units_hint')} min={1} max={1000} value={d.units} onChange={(v) => setD({ ...d, units: v })} required data-testid="profile-form-units" />
        <Select label={t('admin_reserve.profiles.rule')} description={t('admin_reserve.profiles.rule_hint')} data={ruleIds} value={d.priority_id} onChange={(v) => v && setD({ ...d, priority_id: v })} allowDeselect={false} data-testid="profile-form-rule" />
      </Group>
      {profile && <Switch label={t('admin_reserve.profiles.enabled')} checked={d.enabled} onChange={(e) => setD({ ...d, enabled: e.currentTarget.checked })} />}
    </FormModal>
  );
}

function CardPanel({ card, onEdit, onDelete, onAddProfile, onEditProfile, onRemoveProfile }: {
  card: TAdminCard; onEdit: () => void; onDelete: () => void; onAddProfile: () => void; onEditProfile: (p: TAdminProfile) => void; onRemoveProfile: (p: TAdminProfile) => void;
}) {
  const { t } = useTranslation();
  const hosts = useQuery(hypervisorsQuery);
  // Where the card is, once the installation has more than one host.
  const host = (hosts.data?.items.length ?? 0) > 1 ? hosts.data?.items.find((h) => h.id === card.hypervisor_id) : undefined;
  return (
    <Paper withBorder radius="lg" p="md" data-testid="card-panel" data-name={card.name}>
      <Group justify="space-between" align="flex-start" wrap="nowrap" mb="sm">
        <Stack gap={4} style={{ minWidth: 0 }}>
          <Group gap="xs">
            <Title order={3} size="h4">
              {card.name}
            </Title>
            {!card.enabled && (
              <Badge styles={fullBadge} color="gray" variant="light">
                {t('admin_reserve.cards.disabled')}
              </Badge>
            )}
          </Group>
          <Text size="sm" c="dimmed">
            {[card.brand, card.model].filter(Boolean).join(' · ')}
            {card.description ? ` — ${builtInText(t, card.description)}` : ''}
          </Text>
          <Group gap={6}>
            <Badge styles={fullBadge} variant="light" color="indigo">
              {t('admin_reserve.cards.plans', { count: card.plans })}
            </Badge>
            <Badge styles={fullBadge} variant="light" color={card.bookings ? 'orange' : 'gray'}>
              {t('admin_reserve.cards.bookings', { count: card.bookings })}
            </Badge>
            {host && (
              <Badge styles={fullBadge} variant="light" color="teal" data-testid="card-hypervisor">
                {t('admin_reserve.cards.in_host', { name: host.name })}
              </Badge>
            )}
          </Group>
        </Stack>
        <Group gap={4} wrap="nowrap">
          <RowAction label={t('admin_reserve.cards.edit')} icon={<IconEdit size={16} />} onClick={onEdit} testId="card-edit" />
          <RowAction label={t('admin_reserve.cards.delete')} icon={<IconTrash size={16} />} color="red" onClick={onDelete} testId="card-delete" />
        </Group>
      </Group>
      {card.subitems.length === 0 ? (
        <Text size="sm" c="dimmed" mb="sm" data-testid="card-no-profiles">
          {t('admin_reserve.profiles.none')}
        </Text>
      ) : (
        <CardTable minWidth={560} verticalSpacing="xs" data-testid="profiles-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('admin_reserve.profiles.name')}</Table.Th>
              <Table.Th>{t('admin_reserve.profiles.units')}</Table.Th>
              <Table.Th>{t('admin_reserve.profiles.rule')}</Table.Th>
              <Table.Th>{t('admin_reserve.profiles.desktops')}</Table.Th>
              <Table.Th w={80} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {card.subitems.map((p) => (
              <Table.Tr key={p.id} data-testid="profile-row" data-id={p.id}>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Text size="sm" fw={600}>
                      {p.name}
                    </Text>
                    {!p.enabled && (
                      <Badge styles={fullBadge} size="xs" color="gray" variant="light">
                        {t('admin_reserve.cards.disabled')}
                      </Badge>
                    )}
                  </Group>
                  <Text size="xs" c="dimmed">
                    {p.id}
                    {p.description ? ` · ${builtInText(t, p.description)}` : ''}
                  </Text>
                </Table.Td>
                <Table.Td>{p.units}</Table.Td>
                <Table.Td>{p.priority_id || 'default'}</Table.Td>
                <Table.Td>{p.desktops}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <RowAction label={t('admin_reserve.profiles.edit')} icon={<IconEdit size={16} />} onClick={() => onEditProfile(p)} testId="profile-edit" />
                    <RowAction label={t('admin_reserve.profiles.remove')} icon={<IconTrash size={16} />} color="red" onClick={() => onRemoveProfile(p)} testId="profile-remove" />
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </CardTable>
      )}
      <Button variant="light" size="xs" leftSection={<IconPlus size={14} />} onClick={onAddProfile} data-testid="card-add-profile">
        {t('admin_reserve.profiles.new')}
      </Button>
    </Paper>
  );
}

/** /isard-admin/reservables: the GPU cards, the profiles each can offer (the planner's choices) and what uses them. */
export default function ReservablesPage() {
  const { t } = useTranslation();
  const list = useQuery(cardsQuery);
  const [editing, setEditing] = useState<TAdminCard | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<TAdminCard | null>(null);
  const [profileOf, setProfileOf] = useState<{ card: TAdminCard; profile: TAdminProfile | null } | null>(null);
  const [removing, setRemoving] = useState<{ card: TAdminCard; profile: TAdminProfile } | null>(null);
  const cards = list.data ?? [];
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin_reserve.nav.reservables')}
        subtitle={t('admin_reserve.cards.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="cards-new">
            {t('admin_reserve.cards.new')}
          </Button>
        }
      />
      {list.isPending ? (
        <Skeleton h={160} radius="lg" />
      ) : list.isError ? (
        <Alert color="red" icon={<IconAlertTriangle size={16} />} data-testid="cards-error">
          {t('admin_reserve.load_failed')}
        </Alert>
      ) : cards.length === 0 ? (
        <EmptyState icon={<IconCpu size={28} />} title={t('admin_reserve.cards.empty')} body={t('admin_reserve.cards.empty_body')} />
      ) : (
        cards.map((c) => (
          <CardPanel
            key={c.id}
            card={c}
            onEdit={() => setEditing(c)}
            onDelete={() => setDeleting(c)}
            onAddProfile={() => setProfileOf({ card: c, profile: null })}
            onEditProfile={(p) => setProfileOf({ card: c, profile: p })}
            onRemoveProfile={(p) => setRemoving({ card: c, profile: p })}
          />
        ))
      )}
      <CardForm opened={editing !== undefined} onClose={() => setEditing(undefined)} card={editing ?? null} />
      <ProfileForm opened={profileOf !== null} onClose={() => setProfileOf(null)} card={profileOf?.card ?? null} profile={profileOf?.profile ?? null} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin_reserve.cards.delete_title')}
        body={t('admin_reserve.cards.delete_body', { name: deleting?.name ?? '' })}
        confirmLabel={t('admin_reserve.cards.delete')}
        testId="card-delete"
        onConfirm={async () => {
          await deleteCard(deleting!.id);
          await refreshReserve();
        }}
      />
      <ConfirmDelete
        opened={removing !== null}
        onClose={() => setRemoving(null)}
        title={t('admin_reserve.profiles.remove_title')}
        body={t('admin_reserve.profiles.remove_body', { name: removing?.profile.name ?? '', card: removing?.card.name ?? '' })}
        confirmLabel={t('admin_reserve.profiles.remove')}
        testId="profile-remove"
        onConfirm={async () => {
          await removeProfile(removing!.card.id, removing!.profile.id);
          await refreshReserve();
        }}
      />
    </Stack>
  );
}
