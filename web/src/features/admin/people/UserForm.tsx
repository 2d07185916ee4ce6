import { useEffect, useState } from 'react';
import { Divider, MultiSelect, PasswordInput, Select, SimpleGrid, Switch, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ROLES, type TAdminUser, type TQuota, type TRole } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { useAction } from '../../../lib/use-action';
import { createUser, refreshPeople, sendResetMail, updateUser, categoriesQuery, groupsQuery } from './api';
import { QuotaEditor } from './QuotaEditor';
import { FormModal } from '../shared/console';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';
import { HANDLES_ERROR } from '../../../lib/queries';

type Draft = {
  username: string; name: string; email: string; role: TRole; category: string; group: string; secondary: string[];
  active: boolean; password: string; quota: TQuota | null;
  /** New users: no password now, a link by mail to set one. */
  sendLink: boolean;
};

const draftOf = (u: TAdminUser | null, category: string): Draft =>
  u
    ? { username: u.username, name: u.name, email: u.email, role: u.role, category: u.category, group: u.group, secondary: u.secondary_groups, active: u.active, password: '', quota: u.quota, sendLink: false }
    : { username: '', name: '', email: '', role: 'user', category, group: '', secondary: [], active: true, password: '', quota: null, sendLink: false };

/** Create or edit a user: identity, role, category and groups, active, a password set by the admin, a quota override. */
export function UserForm({ opened, onClose, user, isAdmin, myCategory }: { opened: boolean; onClose: () => void; user: TAdminUser | null; isAdmin: boolean; myCategory: string }) {
  const { t } = useTranslation();
  const [d, setD] = useState<Draft>(() => draftOf(user, myCategory));
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (opened) {
      setD(draftOf(user, myCategory));
      setError(null);
    }
  }, [opened, user, myCategory, setError]);
  const cats = useQuery({ ...categoriesQuery(), enabled: opened && isAdmin, meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery('', d.category), enabled: opened && Boolean(d.category), meta: HANDLES_ERROR });
  const groupOptions = (groups.data?.items ?? []).map((g) => ({ value: g.id, label: builtInText(t, g.name) }));
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));
  const roles = ROLES.filter((r) => isAdmin || r !== 'admin');

  const save = () =>
    run(async () => {
      if (user) {
        await updateUser(user.id, {
          name: d.name, email: d.email, role: d.role, group: d.group, secondary_groups: d.secondary, active: d.active, quota: d.quota,
          ...(d.category !== user.category ? { category: d.category } : {}),
          ...(d.password ? { password: d.password } : {}),
        });
      } else {
        const created = await createUser({
          username: d.username.trim(), name: d.name, email: d.email.trim(), role: d.role, category: isAdmin ? d.category : undefined,
          group: d.group, secondary_groups: d.secondary, active: d.active, quota: d.quota, ...(d.sendLink ? {} : { password: d.password }),
        });
        await refreshPeople();
        notifySuccess(t('admin.users.created'));
        onClose();
        // The user exists either way: a mail that fails says so, and the row's menu sends it again.
        if (d.sendLink) {
          await sendResetMail(created.id)
            .then(() => notifySuccess(t('admin.users.reset_mail_sent', { email: created.email })))
            .catch(handleError);
        }
        return;
      }
      await refreshPeople();
      notifySuccess(t('admin.users.saved'));
      onClose();
    });

  return (
    <FormModal opened={opened} onClose={onClose} title={t(user ? 'admin.users.edit_title' : 'admin.users.new_title')} size="lg" onSubmit={save} busy={busy} error={error} testId="user-form" saveLabel={t(user ? 'common.save' : 'admin.users.create')}>
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <TextInput label={t('admin.users.username')} value={d.username} onChange={(e) => set('username', e.currentTarget.value)} required disabled={Boolean(user)} maxLength={64} data-testid="user-form-username" />
        <TextInput label={t('admin.users.name')} value={d.name} onChange={(e) => set('name', e.currentTarget.value)} required maxLength={128} data-testid="user-form-name" />
        <TextInput label={t('admin.users.email')} type="email" value={d.email} onChange={(e) => set('email', e.currentTarget.value)} maxLength={254} data-testid="user-form-email" />
        <Select label={t('admin.users.role')} data={roles.map((r) => ({ value: r, label: t(`roles.${r}`) }))} value={d.role} onChange={(v) => v && set('role', v as TRole)} allowDeselect={false} data-testid="user-form-role" />
        {isAdmin && (
          <Select
            label={t('admin.users.category')}
            data={(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))}
            value={d.category}
            onChange={(v) => v && setD((x) => ({ ...x, category: v, group: '', secondary: [] }))}
            allowDeselect={false}
            searchable
            data-testid="user-form-category"
          />
        )}
        <Select label={t('admin.users.group')} data={groupOptions} value={d.group || null} onChange={(v) => set('group', v ?? '')} required searchable data-testid="user-form-group" />
      </SimpleGrid>
      <MultiSelect label={t('admin.users.secondary_groups')} data={groupOptions.filter((g) => g.value !== d.group)} value={d.secondary} onChange={(v) => set('secondary', v)} searchable clearable data-testid="user-form-secondary" />
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        {!user && (
          <Switch
            mt="xs"
            label={t('admin.users.send_link')}
            description={t('admin.users.send_link_hint')}
            checked={d.sendLink}
            onChange={(e) => set('sendLink', e.currentTarget.checked)}
            disabled={!d.email.trim()}
            data-testid="user-form-send-link"
          />
        )}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        {!d.sendLink && (
        <PasswordInput
          label={t(user ? 'admin.users.new_password' : 'admin.users.password')}
          description={t(user ? 'admin.users.new_password_hint' : 'admin.users.password_hint')}
          value={d.password}
          onChange={(e) => set('password', e.currentTarget.value)}
          required={!user}
          autoComplete="new-password"
          data-testid="user-form-password"
        />
        )}
        <Switch mt="lg" label={t('admin.users.active')} checked={d.active} onChange={(e) => set('active', e.currentTarget.checked)} data-testid="user-form-active" />
      </SimpleGrid>
      <Divider label={t('admin.quota.title')} labelPosition="left" />
      <QuotaEditor kind="quota" value={d.quota} onChange={(q) => set('quota', q)} testId="user-form-quota" />
    </FormModal>
  );
}
