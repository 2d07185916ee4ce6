import { useMemo, useState } from 'react';
import { ActionIcon, Alert, Badge, Button, Card, Code, CopyButton, Group, Modal, SegmentedControl, Select, Stack, Table, Text, TextInput, Title, Tooltip } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { IconAlertTriangle, IconApi, IconBook, IconCheck, IconCopy, IconPlus, IconTrash } from '@tabler/icons-react';
import { API_TOKEN_MAX_DAYS, ZApiTokenCreated, ZApiTokenList, type TApiToken, type TApiTokenCreated, type TApiTokenScope } from '@vdi/contracts';
import { api } from '../../lib/api';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { useAction } from '../../lib/use-action';
import { modals } from '../../lib/modals';
import { CardTable } from '../../components/CardTable';
import { EmptyState } from '../../components/EmptyState';
import '../../i18n/areas/account';

const TOKENS_KEY = ['user', 'api-tokens'] as const;
const tokensQuery = { queryKey: TOKENS_KEY, queryFn: () => api.get('/user/api-tokens', ZApiTokenList) };
const EXPIRY_DAYS = ['30', '90', '365', 'custom', 'never'] as const;
type Expiry = (typeof EXPIRY_DAYS)[number];
const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** When a token made now with this choice stops working (ISO), or null: until revoked. A custom day: its end, local time. */
function expiryOf(choice: Expiry, day: string): string | null {
  if (choice === 'never') return null;
  if (choice === 'custom') return day ? new Date(`${day}T23:59:59`).toISOString() : null;
  return new Date(Date.now() + Number(choice) * DAY_MS).toISOString();
}

function CreateTokenModal({ opened, onClose, onCreated }: { opened: boolean; onClose: () => void; onCreated: (made: TApiTokenCreated) => void }) {
  const { t } = useTranslation();
  const [name, setName] = useState('');
  const [scope, setScope] = useState<TApiTokenScope>('read');
  const [expiry, setExpiry] = useState<Expiry>('90');
  const [day, setDay] = useState('');
  const { busy, error, run } = useAction();
  const save = () =>
    run(async () => {
      const made = await api.post('/user/api-tokens', { name: name.trim(), scope, expires: expiryOf(expiry, day) }, ZApiTokenCreated);
      setName('');
      onCreated(made);
    });
  const today = Date.now();
  return (
    <Modal opened={opened} onClose={onClose} title={t('account.tokens.new_title')} centered data-testid="token-form">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <Stack gap="sm">
          <TextInput label={t('account.tokens.name')} description={t('account.tokens.name_hint')} value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={64} required data-autofocus data-testid="token-name" />
          <div>
            <Text size="sm" fw={500} mb={4}>
              {t('account.tokens.scope')}
            </Text>
            <SegmentedControl
              fullWidth
              value={scope}
              onChange={(v) => setScope(v as TApiTokenScope)}
              data={[
                { value: 'read', label: t('account.tokens.scopes.read') },
                { value: 'full', label: t('account.tokens.scopes.full') },
              ]}
              data-testid="token-scope"
            />
            <Text size="xs" c="dimmed" mt={4}>
              {t(`account.tokens.scope_hint.${scope}`)}
            </Text>
          </div>
          <Select
            label={t('account.tokens.expires')}
            data={EXPIRY_DAYS.map((d) => ({ value: d, label: t(`account.tokens.expiry.${d}`) }))}
            value={expiry}
            onChange={(v) => v && setExpiry(v as Expiry)}
            allowDeselect={false}
            data-testid="token-expiry"
          />
          {expiry === 'custom' && (
            <TextInput
              type="date"
              label={t('account.tokens.expiry_day')}
              description={t('account.tokens.expiry_max', { days: API_TOKEN_MAX_DAYS })}
              value={day}
              min={isoDay(today + DAY_MS)}
              max={isoDay(today + (API_TOKEN_MAX_DAYS - 1) * DAY_MS)}
              onChange={(e) => setDay(e.currentTarget.value)}
              required
              data-testid="token-expiry-day"
            />
          )}
          {expiry === 'never' && (
            <Text size="xs" c="orange.7">
              {t('account.tokens.never_hint')}
            </Text>
          )}
          {error && (
            <Alert color="red" variant="light" data-testid="token-form-error">
              {error}
            </Alert>
          )}
          <Group justify="flex-end" mt="xs">
            <Button variant="default" onClick={onClose}>
              {t('common.cancel')}
            </Button>
            <Button type="submit" loading={busy} disabled={!name.trim() || (expiry === 'custom' && !day)} data-testid="token-create">
              {t('account.tokens.create')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** The secret, once: copied now or never seen again. */
function ShowOnceModal({ made, onClose }: { made: TApiTokenCreated | null; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Modal opened={made !== null} onClose={onClose} title={t('account.tokens.created_title', { name: made?.name ?? '' })} centered size="lg" data-testid="token-created">
      <Stack gap="sm">
        <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} />}>
          {t('account.tokens.copy_now')}
        </Alert>
        <Group gap="xs" wrap="nowrap" align="center">
          <Code block style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }} data-testid="token-secret">
            {made?.token}
          </Code>
          <CopyButton value={made?.token ?? ''}>
            {({ copied, copy }) => (
              <Button variant={copied ? 'light' : 'filled'} color={copied ? 'teal' : undefined} leftSection={copied ? <IconCheck size={16} /> : <IconCopy size={16} />} onClick={copy} data-testid="token-copy">
                {t(copied ? 'account.tokens.copied' : 'account.tokens.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Text size="xs" c="dimmed">
          {t('account.tokens.usage')}
        </Text>
        <Code block fz="xs" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>{`curl -H "Authorization: Bearer ${made?.prefix ?? 'vdi_…'}_…" ${window.location.origin}/api/v3/user`}</Code>
        <Group justify="flex-end">
          <Button onClick={onClose} data-testid="token-created-done">
            {t('account.tokens.done')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The profile's personal API tokens: made here (secret shown once), listed by prefix with their last use, revoked here. */
export function ApiTokensCard() {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const list = useQuery(tokensQuery);
  const [creating, setCreating] = useState(false);
  const [made, setMade] = useState<TApiTokenCreated | null>(null);
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }), [i18n.language]);
  const when = (iso: string | null, none: string) => (iso ? dateFmt.format(new Date(iso)) : none);
  const refresh = () => qc.invalidateQueries({ queryKey: TOKENS_KEY });
  const revoke = (tk: TApiToken) =>
    modals.openConfirmModal({
      title: t('account.tokens.revoke_title'),
      centered: true,
      children: <Text size="sm">{t('account.tokens.revoke_body', { name: tk.name })}</Text>,
      labels: { confirm: t('account.tokens.revoke'), cancel: t('common.cancel') },
      confirmProps: { color: 'red', 'data-testid': 'confirm-token-revoke' },
      cancelProps: { 'data-testid': 'cancel-token-revoke' },
      onConfirm: async () => {
        try {
          await api.delete(`/user/api-tokens/${encodeURIComponent(tk.id)}`);
          await refresh();
          notifySuccess(t('account.tokens.revoked'));
        } catch (err) {
          handleError(err);
        }
      },
    });
  const items = list.data ?? [];
  return (
    <Card withBorder padding="lg" data-testid="api-tokens">
      <Group justify="space-between" mb="xs" wrap="wrap" gap="xs">
        <Title order={2} size="h4">
          {t('account.tokens.title')}
        </Title>
        <Group gap="xs">
          <Button variant="subtle" component={Link} to="/api-reference" leftSection={<IconBook size={16} />} data-testid="open-api-docs">
            {t('account.tokens.reference')}
          </Button>
          <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)} data-testid="token-new">
            {t('account.tokens.new')}
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed" mb="md">
        {t('account.tokens.intro')}
      </Text>
      {!list.isPending && items.length === 0 ? (
        <EmptyState icon={<IconApi size={28} />} title={t('account.tokens.empty')} body={t('account.tokens.empty_body')} />
      ) : (
        <CardTable minWidth={720} verticalSpacing="sm" data-testid="tokens-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('account.tokens.name')}</Table.Th>
              <Table.Th>{t('account.tokens.scope')}</Table.Th>
              <Table.Th>{t('account.tokens.created')}</Table.Th>
              <Table.Th>{t('account.tokens.last_used')}</Table.Th>
              <Table.Th>{t('account.tokens.expires')}</Table.Th>
              <Table.Th w={50} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((tk) => {
              const expired = tk.expires !== null && new Date(tk.expires).getTime() <= Date.now();
              return (
                <Table.Tr key={tk.id} data-testid="token-row" data-name={tk.name}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {tk.name}
                    </Text>
                    <Code fz="xs">{tk.prefix}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" radius="sm" color={tk.scope === 'read' ? 'blue' : 'violet'}>
                      {t(`account.tokens.scopes.${tk.scope}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{when(tk.created, '—')}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" c={tk.last_used ? undefined : 'dimmed'} data-testid="token-last-used">
                      {when(tk.last_used, t('account.tokens.never_used'))}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Text size="sm" c={tk.expires ? undefined : 'dimmed'}>
                        {when(tk.expires, t('account.tokens.no_expiry'))}
                      </Text>
                      {expired && (
                        <Badge size="xs" color="orange" variant="light">
                          {t('account.tokens.expired')}
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Tooltip label={t('account.tokens.revoke')}>
                      <ActionIcon variant="subtle" color="red" onClick={() => revoke(tk)} aria-label={t('account.tokens.revoke')} data-testid="token-revoke">
                        <IconTrash size={16} />
                      </ActionIcon>
                    </Tooltip>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </CardTable>
      )}
      <CreateTokenModal
        opened={creating}
        onClose={() => setCreating(false)}
        onCreated={(m) => {
          setCreating(false);
          setMade(m);
          void refresh();
        }}
      />
      <ShowOnceModal made={made} onClose={() => setMade(null)} />
    </Card>
  );
}
