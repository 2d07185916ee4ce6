import { Card, Select, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ZSignInDesktop, type TDesktop, type TSignInChoice, type TUserPool } from '@vdi/contracts';
import { api } from '../../lib/api';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { desktopsQuery, userPoolsQuery } from '../../entities/desktop/api';
import '../../i18n/areas/account';

const KEY = ['user', 'sign-in-desktop'] as const;
const opensInBrowser = (d: TDesktop) => d.viewers.includes('browser-vnc') || d.viewers.includes('browser-rdp');
const poolOpensInBrowser = (p: TUserPool) => p.viewers.includes('browser-vnc') || p.viewers.includes('browser-rdp');
const valueOf = (open: TSignInChoice) => (typeof open !== 'object' ? open : 'desktop_id' in open ? `desktop:${open.desktop_id}` : `pool:${open.pool_id}`);
const choiceOf = (value: string): TSignInChoice =>
  value.startsWith('desktop:') ? { desktop_id: value.slice('desktop:'.length) } : value.startsWith('pool:') ? { pool_id: value.slice('pool:'.length) } : value === 'list' ? 'list' : 'group';

/** "My desktop at sign-in": what signing in opens — the desktops screen, one of the person's desktops, or as the group says. */
export function SignInDesktopCard() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const current = useQuery({ queryKey: KEY, queryFn: () => api.get('/user/sign-in-desktop', ZSignInDesktop) });
  const desktops = useQuery(desktopsQuery);
  const pools = useQuery(userPoolsQuery);
  // A desktop got from a pool is chosen through its pool.
  const fromPools = new Set((pools.data ?? []).map((p) => p.desktop_id));
  const choices = [
    { value: 'group', label: current.data?.group_default ? t('account.sign_in_open.group_on') : t('account.sign_in_open.group_off') },
    { value: 'list', label: t('account.sign_in_open.list') },
    ...(desktops.data ?? []).filter((d) => opensInBrowser(d) && !fromPools.has(d.id)).map((d) => ({ value: `desktop:${d.id}`, label: t('account.sign_in_open.desktop', { name: d.name }) })),
    ...(pools.data ?? []).filter(poolOpensInBrowser).map((p) => ({ value: `pool:${p.id}`, label: t('account.sign_in_open.pool', { name: p.name }) })),
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
