import { useEffect, useMemo, useState } from 'react';
import { Avatar, Badge, Button, Group, Modal, Paper, PasswordInput, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconBuilding, IconEdit, IconFingerprint, IconPlayerPlay, IconPlus, IconSearch, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { IDENTITY_KINDS, type TIdentityPreview, type TIdentityProvider } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { HANDLES_ERROR } from '../../../lib/queries';
import { useAction } from '../../../lib/use-action';
import { builtInText } from '../../../lib/built-in-text';
import { EmptyState, LoadError } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { ConfirmDelete, FormError, fullBadge, ListTable, RowAction, useCodeText } from '../shared/console';
import { categoriesQuery, groupsQuery } from './api';
import { deleteProvider, identityProvidersQuery, previewOf, refreshIdentity, testProvider, updateProvider } from './identity-api';
import { bodyOfProvider, KIND_LABEL } from './identity-draft';
import { IdentityProviderForm } from './IdentityProviderForm';
import '../../../i18n/areas/admin';

const KIND_COLOR = { ldap: 'grape', oidc: 'indigo', saml: 'teal' } as const;
const OUTCOME_COLOR = { create: 'teal', existing: 'blue', update: 'indigo', register: 'yellow', refused: 'red', disabled: 'red' } as const;

/** What a test sign-in found and what would happen (nothing was created). */
function PreviewView({ preview, provider }: { preview: TIdentityPreview; provider: TIdentityProvider | undefined }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const groups = useQuery({ ...groupsQuery(), meta: HANDLES_ERROR });
  const cats = useQuery({ ...categoriesQuery(), meta: HANDLES_ERROR });
  const group = groups.data?.items.find((g) => g.id === preview.group_id);
  const category = cats.data?.items.find((c) => c.id === preview.category_id);
  const rule = preview.rule !== null ? provider?.rules[preview.rule] : undefined;
  const who = preview.identity;
  return (
    <Stack gap="sm" data-testid="idp-preview">
      <Group gap="sm" wrap="nowrap">
        <Avatar src={who.photo || null} radius="xl" size={48} alt="" />
        <div>
          <Text fw={600} data-testid="idp-preview-name">
            {who.name || who.username}
          </Text>
          <Text size="sm" c="dimmed">
            {who.username}
            {who.email ? ` · ${who.email}` : ''}
          </Text>
          <Text size="xs" c="dimmed">
            {t('admin.identity.preview.uid')}: {who.uid}
          </Text>
        </div>
      </Group>
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          {t(provider?.kind === 'ldap' ? 'admin.identity.preview.groups' : 'admin.identity.preview.groups_provider')}
        </Text>
        {who.groups.length ? (
          <Group gap={4}>
            {who.groups.map((g) => (
              <Badge key={g} variant="light" color="gray" styles={{ label: { textTransform: 'none' } }}>
                {g}
              </Badge>
            ))}
          </Group>
        ) : (
          <Text size="sm" c="dimmed">
            {t('admin.identity.preview.no_groups')}
          </Text>
        )}
      </Stack>
      <Text size="sm" data-testid="idp-preview-rule">
        {preview.rule === null
          ? t('admin.identity.preview.no_rule')
          : t('admin.identity.preview.rule', { n: preview.rule + 1, attribute: rule?.attribute ?? '', value: rule?.value ?? '' })}
      </Text>
      <Paper withBorder radius="md" p="sm">
        <Stack gap={6}>
          <Group gap="xs">
            <Badge color={OUTCOME_COLOR[preview.outcome]} variant="light" styles={fullBadge} data-testid="idp-preview-outcome" data-outcome={preview.outcome}>
              {t(`admin.identity.outcome.${preview.outcome}`)}
            </Badge>
          </Group>
          <Text size="sm">{t(`admin.identity.outcome_help.${preview.outcome}`)}</Text>
          {(group || preview.group_id) && (
            <Text size="sm" data-testid="idp-preview-group">
              {t('admin.identity.preview.group')}: <b>{group ? builtInText(t, group.name) : preview.group_id}</b>
              {category ? ` · ${builtInText(t, category.name)}` : ''}
            </Text>
          )}
          {preview.role && (
            <Text size="sm" data-testid="idp-preview-role">
              {t('admin.identity.preview.role')}: <b>{t(`roles.${preview.role}`)}</b>
            </Text>
          )}
          {preview.reason && (
            <Text size="sm" c="red" data-testid="idp-preview-reason">
              {codeText(preview.reason)}
            </Text>
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}

/** A test: LDAP asks an account and shows the preview here; OIDC and SAML open the provider in this tab. */
function TestModal({ provider, onClose }: { provider: TIdentityProvider | null; onClose: () => void }) {
  const { t } = useTranslation();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [preview, setPreview] = useState<TIdentityPreview | null>(null);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    setUsername('');
    setPassword('');
    setPreview(null);
    setError(null);
  }, [provider, setError]);
  const redirect = provider?.kind !== 'ldap';
  const go = () =>
    run(async () => {
      if (!provider) return;
      if (redirect) {
        const answer = await testProvider(provider.id, {});
        if (answer.url) window.location.assign(answer.url);
        return;
      }
      const answer = await testProvider(provider.id, { username: username.trim(), password });
      setPassword('');
      setPreview(answer.preview ?? null);
    });
  return (
    <Modal opened={provider !== null} onClose={onClose} title={t('admin.identity.test_title', { name: provider?.name ?? '' })} size="lg" centered data-testid="idp-test">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void go();
        }}
      >
        <Stack gap="sm">
          <Text size="sm" c="dimmed">
            {t(redirect ? 'admin.identity.test_redirect_help' : 'admin.identity.test_ldap_help')}
          </Text>
          {!redirect && (
            <Group grow align="flex-start" wrap="wrap">
              <TextInput label={t('admin.identity.test_username')} value={username} onChange={(e) => setUsername(e.currentTarget.value)} required maxLength={128} autoComplete="off" miw={180} data-testid="idp-test-username" />
              <PasswordInput label={t('admin.identity.test_password')} value={password} onChange={(e) => setPassword(e.currentTarget.value)} required maxLength={512} autoComplete="new-password" miw={180} data-testid="idp-test-password" />
            </Group>
          )}
          <FormError error={error} testId="idp-test-error" />
          {preview && <PreviewView preview={preview} provider={provider ?? undefined} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('common.close')}
            </Button>
            <Button type="submit" loading={busy} leftSection={<IconPlayerPlay size={16} />} data-testid="idp-test-run">
              {t(redirect ? 'admin.identity.test_open' : 'admin.identity.test_run')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** On return from an OIDC or SAML test (?preview=…&provider=…): the preview the provider's callback left. */
function ReturnedPreview({ providers }: { providers: TIdentityProvider[] | undefined }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const [params, setParams] = useSearchParams();
  const previewId = params.get('preview');
  const providerId = params.get('provider');
  const preview = useQuery({ queryKey: ['admin', 'identity-preview', previewId], queryFn: () => previewOf(previewId!), enabled: Boolean(previewId), retry: false, meta: HANDLES_ERROR });
  const close = () => setParams({}, { replace: true });
  const provider = providers?.find((p) => p.id === providerId);
  return (
    <Modal opened={Boolean(previewId)} onClose={close} title={t('admin.identity.preview_title', { name: provider?.name ?? '' })} size="lg" centered data-testid="idp-returned">
      <Stack gap="sm">
        {preview.isPending && <Text size="sm">{t('admin.identity.preview_loading')}</Text>}
        {preview.error && <FormError error={codeText((preview.error as { code?: string }).code ?? 'generic_error')} testId="idp-returned-error" />}
        {preview.data && <PreviewView preview={preview.data} provider={provider} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={close} data-testid="idp-returned-close">
            {t('common.close')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** /isard-admin/identity_providers: directories and identity providers people sign in with (admins). */
export default function IdentityProvidersPage() {
  const { t } = useTranslation();
  const list = useQuery({ ...identityProvidersQuery, meta: HANDLES_ERROR });
  const cats = useQuery({ ...categoriesQuery(), meta: HANDLES_ERROR });
  const [search, setSearch] = useState('');
  const [kind, setKind] = useState<string | null>(null);
  const [editing, setEditing] = useState<TIdentityProvider | null | undefined>(undefined);
  const [testing, setTesting] = useState<TIdentityProvider | null>(null);
  const [deleting, setDeleting] = useState<TIdentityProvider | null>(null);
  const [toggling, setToggling] = useState<string | null>(null);
  const all = useMemo(() => list.data ?? [], [list.data]);
  const items = useMemo(
    () => all.filter((p) => (!kind || p.kind === kind) && (!search.trim() || p.name.toLowerCase().includes(search.trim().toLowerCase()))),
    [all, kind, search],
  );
  const catName = (id: string | null) => {
    if (!id) return t('admin.identity.all_organisations');
    const c = cats.data?.items.find((x) => x.id === id);
    return c ? builtInText(t, c.name) : id;
  };
  const toggle = async (p: TIdentityProvider) => {
    setToggling(p.id);
    try {
      await updateProvider(p.id, bodyOfProvider(p, { enabled: !p.enabled }));
      await refreshIdentity();
      notifySuccess(t(p.enabled ? 'admin.identity.disabled_done' : 'admin.identity.enabled_done', { name: p.name }));
    } catch (err) {
      handleError(err);
    } finally {
      setToggling(null);
    }
  };
  const add = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing(null)} data-testid="idp-new">
      {t('admin.identity.new')}
    </Button>
  );

  return (
    <Stack gap="md">
      <PageHeader title={t('admin.nav.identity_providers')} subtitle={t('admin.identity.subtitle')} actions={all.length > 0 ? add : undefined} />
      {all.length > 0 && (
        <Paper withBorder radius="lg" p="md">
          <Group gap="sm" align="flex-end" wrap="wrap">
            <TextInput
              leftSection={<IconSearch size={16} />}
              placeholder={t('admin.identity.search')}
              aria-label={t('admin.identity.search')}
              value={search}
              onChange={(e) => setSearch(e.currentTarget.value)}
              style={{ flex: '1 1 220px' }}
              data-testid="idp-search"
            />
            <Select
              placeholder={t('admin.identity.kind')}
              aria-label={t('admin.identity.kind')}
              data={IDENTITY_KINDS.map((k) => ({ value: k, label: KIND_LABEL[k] }))}
              value={kind}
              onChange={setKind}
              clearable
              style={{ flex: '1 1 160px' }}
              data-testid="idp-filter-kind"
            />
          </Group>
        </Paper>
      )}
      <ListTable
        pending={list.isPending}
        failed={list.isError && !list.data && (
          <LoadError title={t('admin.identity.load_failed')} body={t('admin.identity.load_failed_body')} retrying={list.isFetching} onRetry={() => void list.refetch()} testId="idp-retry" />
        )}
        empty={items.length === 0 && (
          all.length === 0 ? (
            <EmptyState icon={<IconFingerprint size={28} />} title={t('admin.identity.empty')} body={t('admin.identity.empty_body')} action={add} />
          ) : (
            <EmptyState icon={<IconSearch size={28} />} title={t('admin.identity.none_match')} />
          )
        )}
        minWidth={820}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="idp-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin.identity.name')}</Table.Th>
            <Table.Th>{t('admin.identity.kind')}</Table.Th>
            <Table.Th>{t('admin.identity.organisation')}</Table.Th>
            <Table.Th>{t('admin.identity.enabled')}</Table.Th>
            <Table.Th>{t('admin.identity.rules')}</Table.Th>
            <Table.Th w={120} />
          </Table.Tr>
        }
      >
        {items.map((p) => (
          <Table.Tr key={p.id} data-testid="idp-row" data-name={p.name}>
            <Table.Td>
              <Group gap="sm" wrap="nowrap">
                <Avatar src={p.logo || null} radius="sm" size={28} alt="">
                  <IconBuilding size={16} />
                </Avatar>
                <Text size="sm" fw={600}>
                  {p.name}
                </Text>
              </Group>
            </Table.Td>
            <Table.Td>
              <Badge styles={fullBadge} variant="light" color={KIND_COLOR[p.kind]} data-testid="idp-kind">
                {KIND_LABEL[p.kind]}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="sm" data-testid="idp-organisation">
                {catName(p.category_id)}
              </Text>
            </Table.Td>
            <Table.Td>
              <Switch
                checked={p.enabled}
                disabled={toggling === p.id}
                onChange={() => void toggle(p)}
                aria-label={t(p.enabled ? 'admin.identity.disable' : 'admin.identity.enable', { name: p.name })}
                data-testid="idp-enabled"
              />
            </Table.Td>
            <Table.Td data-testid="idp-rules">{p.rules.length}</Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <RowAction label={t('admin.identity.test')} icon={<IconPlayerPlay size={16} />} onClick={() => setTesting(p)} testId="idp-test-open" />
                <RowAction label={t('admin.common.edit')} icon={<IconEdit size={16} />} onClick={() => setEditing(p)} testId="idp-edit" />
                <RowAction label={t('admin.common.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(p)} testId="idp-delete" />
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <IdentityProviderForm opened={editing !== undefined} onClose={() => setEditing(undefined)} provider={editing ?? null} />
      <TestModal provider={testing} onClose={() => setTesting(null)} />
      <ReturnedPreview providers={list.data} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin.identity.delete_title')}
        body={t('admin.identity.delete_body', { name: deleting?.name ?? '' })}
        confirmLabel={t('admin.common.delete')}
        testId="idp-delete"
        onConfirm={async () => {
          await deleteProvider(deleting!.id);
          await refreshIdentity();
        }}
      />
    </Stack>
  );
}
