import { Card, Select, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ZSignInDesktop, type TDesktop, type TSignInChoice } from '@vdi/contracts';
import { api } from '../../lib/api';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { desktopsQuery } from '../../entities/desktop/api';
import '../../i18n/areas/account';

const KEY = ['user', 'sign-in-desktop'] as const;
const opensInBrowser = (d: TDesktop) => d.viewers.includes('browser-vnc') || d.viewers.includes('browser-rdp');
const valueOf = (open: TSignInChoice) => (typeof open === 'object' ? `desktop:${open.desktop_id}` : open);
const choiceOf = (value: string): TSignInChoice => (value.startsWith('desktop:') ? { desktop_id: value.slice('desktop:'.length) } : value === 'list' ? 'list' : 'group');

/** "My desktop at sign-in": what signing in opens — the desktops screen, one of the person's desktops, or as the group says. */
export function SignInDesktopCard() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const current = useQuery({ queryKey: KEY, queryFn: () => api.get('/user/sign-in-desktop', ZSignInDesktop) });
  const desktops = useQuery(desktopsQuery);
  const choices = [
    { value: 'group', label: current.data?.group_default ? t('account.sign_in_open.group_on') : t('account.sign_in_open.group_off') },
    { value: 'list', label: t('account.sign_in_open.list') },
    ...(desktops.data ?? []).filter(opensInBrowser).map((d) => ({ value: `desktop:${d.id}`, label: t('account.sign_in_open.desktop', { name: d.name }) })),
  ];
  const save = async (value: string | null) => {
    if (!value) return;
    try {
      qc.setQueryData(KEY, await api.put('/user/sign-in-desktop', { open: choiceOf(value) }, ZSignInDesktop));
      notifySuccess(t('account.sign_in_open.saved'));
    } catch (err) {
      handleError(err);
    }
  };
  const opens = current.data?.opens;
  return (
    <Card withBorder padding="lg" data-testid="sign-in-open-card">
      <Title order={2} size="h4" mb={4}>
        {t('account.sign_in_open.title')}
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t('account.sign_in_open.hint')}
      </Text>
      <Select
        data={choices}
        value={current.data ? valueOf(current.data.open) : null}
        allowDeselect={false}
        disabled={!current.data}
        onChange={(v) => void save(v)}
        aria-label={t('account.sign_in_open.title')}
        data-testid="sign-in-open-select"
      />
      <Text size="xs" c="dimmed" mt="xs" data-testid="sign-in-open-now">
        {opens ? t('account.sign_in_open.now_desktop', { name: opens.name }) : t('account.sign_in_open.now_list')}
      </Text>
    </Card>
  );
}
