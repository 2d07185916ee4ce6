import { useMemo, useState, useLayoutEffect, type ReactNode } from 'react';
import {
  ActionIcon, Alert, Avatar, Button, Checkbox, CopyButton, FileButton, Group, Modal, Paper, PasswordInput, Radio, SegmentedControl,
  Select, SimpleGrid, Stack, Switch, Tabs, Text, Textarea, TextInput, Tooltip,
} from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconArrowDown, IconArrowUp, IconCheck, IconCopy, IconDownload, IconPhoto, IconPlus, IconTrash, IconUpload } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import {
  ROLES, type TIdentityKind, type TIdentityProvider, type TLdapSettings, type TMappingRule, type TRole,
} from '@vdi/contracts';
import { HttpError } from '../../../lib/api';
import { notifySuccess } from '../../../lib/error-handler';
import { HANDLES_ERROR } from '../../../lib/queries';
import { useAction } from '../../../lib/use-action';
import { builtInText } from '../../../lib/built-in-text';
import { PHONE_QUERY } from '../../../components/CardTable';
import { FormFooter, useCodeText } from '../shared/console';
import { categoriesQuery, groupsQuery } from './api';
import { createProvider, logoDataUrl, refreshIdentity, updateProvider } from './identity-api';
import { ALL, bodyOf, draftOf, KIND_LABEL, roleAbove, ruleKey, type Draft, type Rule, type Settings } from './identity-draft';
import '../../../i18n/areas/admin';

/** A read-only address with a copy button. */
function CopyField({ label, value, testId }: { label: string; value: string; testId: string }) {
  const { t } = useTranslation();
  return (
    <TextInput
      label={label}
      value={value}
      readOnly
      data-testid={testId}
      rightSection={
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Tooltip label={t(copied ? 'admin.identity.copied' : 'admin.identity.copy')}>
              <ActionIcon variant="subtle" color={copied ? 'teal' : undefined} onClick={copy} aria-label={t('admin.identity.copy')}>
                {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      }
    />
  );
}

/** The add/edit form of a sign-in provider: general, connection (per kind) and mapping, in tabs. */
export function IdentityProviderForm({ opened, onClose, provider }: { opened: boolean; onClose: () => void; provider: TIdentityProvider | null }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const phone = useMediaQuery(PHONE_QUERY) ?? false;
  const [d, setD] = useState<Draft>(() => draftOf(provider));
  const [tab, setTab] = useState<string | null>('general');
  const [logoError, setLogoError] = useState<string | null>(null);
  const [xmlName, setXmlName] = useState<string | null>(null);
  /** The server's refusal of one rule: its index and message. */
  const [ruleError, setRuleError] = useState<{ index: number; message: string } | null>(null);
  const [saved, setSaved] = useState<TIdentityProvider | null>(provider);
  const { busy, error, setError, run } = useAction();
  const cats = useQuery({ ...categoriesQuery(), enabled: opened, meta: HANDLES_ERROR });
  const groups = useQuery({ ...groupsQuery('', d.category === ALL ? null : d.category), enabled: opened, meta: HANDLES_ERROR });

  // Filled before the dialog is drawn (a layout effect): a passive effect ran after paint, late on a busy machine, and
  // undid what the person had already clicked or typed in it.
  useLayoutEffect(() => {
    if (!opened) return;
    setD(draftOf(provider));
    setSaved(provider);
    setTab('general');
    setError(null);
    setRuleError(null);
    setLogoError(null);
    setXmlName(null);
  }, [opened, provider, setError]);

  const set = (patch: Partial<Draft>) => setD((x) => ({ ...x, ...patch }));
  const setSettings = <K extends TIdentityKind>(kind: K, patch: Partial<Settings[K]>) =>
    setD((x) => ({ ...x, settings: { ...x.settings, [kind]: { ...x.settings[kind], ...patch } } }));
  const setAttr = (name: keyof TLdapSettings['attributes'], value: string) =>
    setD((x) => ({ ...x, settings: { ...x.settings, [x.kind]: { ...x.settings[x.kind], attributes: { ...x.settings[x.kind].attributes, [name]: value } } } }));
  const setRules = (rules: Rule[]) => {
    setRuleError(null);
    set({ rules });
  };
  const setRule = (i: number, patch: Partial<TMappingRule>) => setRules(d.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: -1 | 1) => {
    const rules = [...d.rules];
    [rules[i], rules[i + by]] = [rules[i + by]!, rules[i]!];
    setRules(rules);
  };

  const groupOptions = useMemo(
    () =>
      (groups.data?.items ?? []).map((g) => ({ value: g.id, label: d.category === ALL ? `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` : builtInText(t, g.name) })),
    [groups.data, d.category, t],
  );
  const roleOptions = ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }));
  const flagged = d.rules.filter((r) => roleAbove(r.role, d.max_role)).length;

  const save = () => {
    // A rule's group is a choice (not checked by the browser): said on its row before anything is sent.
    const unchosen = d.rules.findIndex((r) => !r.group_id);
    if (unchosen >= 0) {
      setRuleError({ index: unchosen, message: t('admin.identity.rule_group_missing') });
      setError(t('admin.identity.rule_group_missing'));
      setTab('mapping');
      return;
    }
    return run(async () => {
      setRuleError(null);
      try {
        const body = bodyOf(d);
        const answer = saved ? await updateProvider(saved.id, body) : await createProvider(body);
        await refreshIdentity();
        notifySuccess(t('admin.common.saved'));
        // A new OIDC or SAML provider stays open on its connection: its callback and metadata addresses exist now.
        if (!saved && answer.kind !== 'ldap') {
          setSaved(answer);
          set({ secret: '', clearSecret: false });
          setTab('connection');
          return;
        }
        onClose();
      } catch (err) {
        if (err instanceof HttpError && (err.code === 'identity_role_not_allowed' || err.code === 'identity_group_not_found')) {
          const n = Number((err.body.params as { rule?: number } | null)?.rule);
          if (n >= 1) {
            setRuleError({ index: n - 1, message: codeText(err.code) });
            setTab('mapping');
          }
        }
        throw err;
      }
    });
  };

  const s = d.settings[d.kind];
  const secretSet = Boolean(saved?.secret_set);
  const secretInput = (label: string, help: string) => (
    <Stack gap={4}>
      <PasswordInput
        label={label}
        description={secretSet && !d.clearSecret ? t('admin.identity.secret_stored') : help}
        placeholder={secretSet ? t('admin.identity.secret_keep') : ''}
        value={d.secret}
        onChange={(e) => set({ secret: e.currentTarget.value, clearSecret: false })}
        disabled={d.clearSecret}
        autoComplete="new-password"
        maxLength={1024}
        data-testid="idp-form-secret"
      />
      {secretSet && (
        <Checkbox
          label={t('admin.identity.secret_clear')}
          checked={d.clearSecret}
          onChange={(e) => set({ clearSecret: e.currentTarget.checked, secret: '' })}
          data-testid="idp-form-secret-clear"
        />
      )}
    </Stack>
  );
  const field = (label: string, help: string, value: string, onChange: (v: string) => void, testId: string, extra: { required?: boolean; placeholder?: string; maxLength?: number } = {}) => (
    <TextInput label={label} description={help} value={value} onChange={(e) => onChange(e.currentTarget.value)} data-testid={testId} maxLength={extra.maxLength ?? 512} {...extra} />
  );
  const section = (title: string, children: ReactNode) => (
    <Paper withBorder radius="md" p="sm">
      <Stack gap="sm">
        <Text fw={600} size="sm">
          {title}
        </Text>
        {children}
      </Stack>
    </Paper>
  );
  const addresses = () => {
    if (d.kind === 'ldap') return null;
    if (!saved) return <Alert color="blue" data-testid="idp-form-urls-after-save">{t('admin.identity.urls_after_save')}</Alert>;
    if (!saved.callback_url) return <Alert color="yellow" data-testid="idp-form-no-public-url">{t('admin.identity.no_public_url')}</Alert>;
    return section(
      t('admin.identity.our_side'),
      <>
        <CopyField label={t(d.kind === 'oidc' ? 'admin.identity.redirect_uri' : 'admin.identity.acs_url')} value={saved.callback_url} testId="idp-form-callback-url" />
        {saved.metadata_url && (
          <Group gap="xs">
            <CopyField label={t('admin.identity.sp_metadata')} value={saved.metadata_url} testId="idp-form-metadata-url" />
            <Button component="a" href={saved.metadata_url} download={`sp-metadata-${saved.id}.xml`} variant="default" leftSection={<IconDownload size={16} />} mt="lg" data-testid="idp-form-metadata-download">
              {t('admin.identity.download')}
            </Button>
          </Group>
        )}
      </>,
    );
  };
  const attrWord = d.kind === 'oidc' ? 'claim' : 'attribute';

  return (
    <Modal opened={opened} onClose={onClose} title={t(saved ? 'admin.identity.edit_title' : 'admin.identity.new_title')} size="xl" fullScreen={phone} centered data-testid="idp-form">
      <form
        // A required field of a tab not shown: that tab is opened and the browser says what is missing there.
        onInvalidCapture={(e) => {
          const where = (e.target as HTMLElement).closest<HTMLElement>('[data-tab]')?.dataset.tab;
          if (where && where !== tab) {
            setTab(where);
            const form = e.currentTarget;
            requestAnimationFrame(() => form.reportValidity());
          }
        }}
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <Stack gap="sm">
          <Tabs value={tab} onChange={setTab} keepMounted>
            <Tabs.List mb="sm">
              <Tabs.Tab value="general" data-testid="idp-tab-general">
                {t('admin.identity.tab_general')}
              </Tabs.Tab>
              <Tabs.Tab value="connection" data-testid="idp-tab-connection">
                {t('admin.identity.tab_connection')}
              </Tabs.Tab>
              <Tabs.Tab value="mapping" data-testid="idp-tab-mapping" color={flagged || ruleError ? 'red' : undefined}>
                {t('admin.identity.tab_mapping')}
              </Tabs.Tab>
            </Tabs.List>

            <Tabs.Panel value="general" data-tab="general">
              <Stack gap="sm">
                {!saved ? (
                  <Stack gap={4}>
                    <Text size="sm" fw={500} id="idp-kind-label">
                      {t('admin.identity.kind')}
                    </Text>
                    <SegmentedControl
                      aria-labelledby="idp-kind-label"
                      value={d.kind}
                      onChange={(v) => set({ kind: v as TIdentityKind, secret: '' })}
                      data={(['ldap', 'oidc', 'saml'] as const).map((k) => ({ value: k, label: KIND_LABEL[k] }))}
                      data-testid="idp-form-kind"
                    />
                    <Text size="xs" c="dimmed">
                      {t(`admin.identity.kind_help.${d.kind}`)}
                    </Text>
                  </Stack>
                ) : (
                  <Text size="sm">
                    {t('admin.identity.kind')}: <b>{KIND_LABEL[d.kind]}</b>
                  </Text>
                )}
                <TextInput label={t('admin.identity.name')} description={t('admin.identity.name_help')} value={d.name} onChange={(e) => set({ name: e.currentTarget.value })} required maxLength={64} data-testid="idp-form-name" />
                <Stack gap={4}>
                  <Text size="sm" fw={500}>
                    {t('admin.identity.logo')}
                  </Text>
                  <Group gap="sm">
                    <Avatar src={d.logo || null} radius="sm" size={40} alt={d.logo ? t('admin.identity.logo_preview') : undefined} data-testid="idp-form-logo-preview">
                      <IconPhoto size={20} />
                    </Avatar>
                    <FileButton
                      accept="image/png,image/jpeg,image/gif,image/svg+xml,image/webp"
                      onChange={(file) => {
                        if (!file) return;
                        void logoDataUrl(file).then((r) => {
                          if ('error' in r) setLogoError(t(`admin.identity.logo_${r.error}`));
                          else {
                            setLogoError(null);
                            set({ logo: r.url });
                          }
                        });
                      }}
                    >
                      {(props) => (
                        <Button {...props} variant="default" leftSection={<IconUpload size={16} />} data-testid="idp-form-logo-upload">
                          {t('admin.identity.logo_upload')}
                        </Button>
                      )}
                    </FileButton>
                    {d.logo && (
                      <Button variant="subtle" color="red" onClick={() => set({ logo: '' })} data-testid="idp-form-logo-remove">
                        {t('admin.identity.logo_remove')}
                      </Button>
                    )}
                  </Group>
                  <Text size="xs" c={logoError ? 'red' : 'dimmed'} data-testid="idp-form-logo-help" role={logoError ? 'alert' : undefined}>
                    {logoError ?? t('admin.identity.logo_help')}
                  </Text>
                </Stack>
                <Select
                  label={t('admin.identity.organisation')}
                  description={t('admin.identity.organisation_help')}
                  data={[{ value: ALL, label: t('admin.identity.all_organisations') }, ...(cats.data?.items ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))]}
                  value={d.category}
                  onChange={(v) => v && set({ category: v })}
                  allowDeselect={false}
                  searchable
                  data-testid="idp-form-category"
                />
                <Switch label={t('admin.identity.enabled')} description={t('admin.identity.enabled_help')} checked={d.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} data-testid="idp-form-enabled" />
              </Stack>
            </Tabs.Panel>

            <Tabs.Panel value="connection" data-tab="connection">
              <Stack gap="sm">
                {d.kind === 'ldap' && (
                  <>
                    {field(t('admin.identity.ldap.url'), t('admin.identity.ldap.url_help'), d.settings.ldap.url, (v) => setSettings('ldap', { url: v }), 'idp-form-ldap-url', { required: true, placeholder: 'ldaps://ldap.example.org:636', maxLength: 256 })}
                    <Switch label={t('admin.identity.ldap.start_tls')} description={t('admin.identity.ldap.start_tls_help')} checked={d.settings.ldap.start_tls} onChange={(e) => setSettings('ldap', { start_tls: e.currentTarget.checked })} data-testid="idp-form-ldap-starttls" />
                    <Stack gap={4}>
                      <Textarea label={t('admin.identity.ldap.ca')} description={t('admin.identity.ldap.ca_help')} value={d.settings.ldap.ca} onChange={(e) => setSettings('ldap', { ca: e.currentTarget.value })} autosize minRows={2} maxRows={6} maxLength={20_000} placeholder="-----BEGIN CERTIFICATE-----" styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }} data-testid="idp-form-ldap-ca" />
                      <Group>
                        <FileButton accept=".pem,.crt,.cer,application/x-pem-file,application/x-x509-ca-cert" onChange={(file) => void file?.text().then((pem) => setSettings('ldap', { ca: pem.slice(0, 20_000) }))}>
                          {(props) => (
                            <Button {...props} size="xs" variant="default" leftSection={<IconUpload size={14} />} data-testid="idp-form-ldap-ca-upload">
                              {t('admin.identity.ldap.ca_upload')}
                            </Button>
                          )}
                        </FileButton>
                      </Group>
                    </Stack>
                    {field(t('admin.identity.ldap.bind_dn'), t('admin.identity.ldap.bind_dn_help'), d.settings.ldap.bind_dn, (v) => setSettings('ldap', { bind_dn: v }), 'idp-form-ldap-binddn', { placeholder: 'cn=portal,ou=services,dc=example,dc=org' })}
                    {secretInput(t('admin.identity.ldap.bind_password'), t('admin.identity.ldap.bind_password_help'))}
                    {field(t('admin.identity.ldap.user_base'), t('admin.identity.ldap.user_base_help'), d.settings.ldap.user_base, (v) => setSettings('ldap', { user_base: v }), 'idp-form-ldap-userbase', { required: true, placeholder: 'ou=people,dc=example,dc=org' })}
                    {field(t('admin.identity.ldap.user_filter'), t('admin.identity.ldap.user_filter_help'), d.settings.ldap.user_filter, (v) => setSettings('ldap', { user_filter: v }), 'idp-form-ldap-userfilter')}
                    {field(t('admin.identity.ldap.group_base'), t('admin.identity.ldap.group_base_help'), d.settings.ldap.group_base, (v) => setSettings('ldap', { group_base: v }), 'idp-form-ldap-groupbase', { placeholder: 'ou=groups,dc=example,dc=org' })}
                    {field(t('admin.identity.ldap.group_filter'), t('admin.identity.ldap.group_filter_help'), d.settings.ldap.group_filter, (v) => setSettings('ldap', { group_filter: v }), 'idp-form-ldap-groupfilter')}
                  </>
                )}
                {d.kind === 'oidc' && (
                  <>
                    {field(t('admin.identity.oidc.issuer'), t('admin.identity.oidc.issuer_help'), d.settings.oidc.issuer, (v) => setSettings('oidc', { issuer: v }), 'idp-form-oidc-issuer', { required: true, placeholder: 'https://login.example.org/realms/school' })}
                    {field(t('admin.identity.oidc.client_id'), t('admin.identity.oidc.client_id_help'), d.settings.oidc.client_id, (v) => setSettings('oidc', { client_id: v }), 'idp-form-oidc-clientid', { required: true, maxLength: 256 })}
                    {secretInput(t('admin.identity.oidc.client_secret'), t('admin.identity.oidc.client_secret_help'))}
                    {field(t('admin.identity.oidc.scopes'), t('admin.identity.oidc.scopes_help'), d.settings.oidc.scopes, (v) => setSettings('oidc', { scopes: v }), 'idp-form-oidc-scopes', { maxLength: 256 })}
                  </>
                )}
                {d.kind === 'saml' && (
                  <>
                    {field(t('admin.identity.saml.metadata_url'), t('admin.identity.saml.metadata_url_help'), d.settings.saml.metadata_url, (v) => setSettings('saml', { metadata_url: v }), 'idp-form-saml-metadataurl', { placeholder: 'https://idp.example.org/metadata' })}
                    <Stack gap={4}>
                      <Group justify="space-between" align="flex-end">
                        <Text size="sm" fw={500}>
                          {t('admin.identity.saml.metadata_xml')}
                        </Text>
                        <FileButton
                          accept=".xml,application/xml,text/xml,application/samlmetadata+xml"
                          onChange={(file) => {
                            if (!file) return;
                            void file.text().then((xml) => {
                              setSettings('saml', { metadata_xml: xml });
                              setXmlName(file.name);
                            });
                          }}
                        >
                          {(props) => (
                            <Button {...props} size="xs" variant="default" leftSection={<IconUpload size={14} />} data-testid="idp-form-saml-upload">
                              {t('admin.identity.saml.upload')}
                            </Button>
                          )}
                        </FileButton>
                      </Group>
                      <Textarea
                        aria-label={t('admin.identity.saml.metadata_xml')}
                        description={xmlName ? t('admin.identity.saml.loaded', { name: xmlName }) : t('admin.identity.saml.metadata_xml_help')}
                        value={d.settings.saml.metadata_xml}
                        onChange={(e) => setSettings('saml', { metadata_xml: e.currentTarget.value })}
                        autosize
                        minRows={2}
                        maxRows={6}
                        maxLength={200_000}
                        placeholder="<EntityDescriptor …>"
                        styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
                        data-testid="idp-form-saml-xml"
                      />
                    </Stack>
                  </>
                )}
                {section(
                  t(`admin.identity.attributes_title.${attrWord}`),
                  <>
                    <Text size="xs" c="dimmed">
                      {t(`admin.identity.attributes_help.${d.kind}`)}
                    </Text>
                    <SimpleGrid cols={{ base: 1, xs: 2, sm: 3 }} spacing="sm">
                      {(['username', 'name', 'email', 'photo', 'groups'] as const).map((a) => (
                        <TextInput
                          key={a}
                          label={t(`admin.identity.attr.${a}`)}
                          value={s.attributes[a]}
                          onChange={(e) => setAttr(a, e.currentTarget.value)}
                          required={a === 'username'}
                          maxLength={128}
                          data-testid={`idp-form-attr-${a}`}
                        />
                      ))}
                    </SimpleGrid>
                  </>,
                )}
                {addresses()}
              </Stack>
            </Tabs.Panel>

            <Tabs.Panel value="mapping" data-tab="mapping">
              <Stack gap="sm">
                <Text size="sm" c="dimmed">
                  {t('admin.identity.rules_help')} {t('admin.identity.rules_groups_help')}
                </Text>
                <Select
                  label={t('admin.identity.max_role')}
                  description={t('admin.identity.max_role_help')}
                  data={roleOptions}
                  value={d.max_role}
                  onChange={(v) => v && set({ max_role: v as TRole })}
                  allowDeselect={false}
                  maw={360}
                  data-testid="idp-form-maxrole"
                />
                {flagged > 0 && (
                  <Alert color="red" data-testid="idp-form-rules-flagged">
                    {t('admin.identity.rules_flagged', { role: t(`roles.${d.max_role}`) })}
                  </Alert>
                )}
                {d.rules.length === 0 && (
                  <Text size="sm" c="dimmed" data-testid="idp-form-no-rules">
                    {t('admin.identity.no_rules')}
                  </Text>
                )}
                {d.rules.map((r, i) => {
                  const above = roleAbove(r.role, d.max_role);
                  const failed = ruleError?.index === i ? ruleError.message : null;
                  return (
                    <Paper key={r.key} withBorder radius="md" p="sm" data-testid="idp-rule" style={above || failed ? { borderColor: 'var(--mantine-color-red-6)' } : undefined}>
                      <Stack gap={6}>
                        <Group justify="space-between" wrap="nowrap">
                          <Text size="sm" fw={600}>
                            {t('admin.identity.rule_n', { n: i + 1 })}
                          </Text>
                          <Group gap={2} wrap="nowrap">
                            <ActionIcon variant="subtle" disabled={i === 0} onClick={() => move(i, -1)} aria-label={t('admin.identity.rule_up', { n: i + 1 })} data-testid="idp-rule-up">
                              <IconArrowUp size={16} />
                            </ActionIcon>
                            <ActionIcon variant="subtle" disabled={i === d.rules.length - 1} onClick={() => move(i, 1)} aria-label={t('admin.identity.rule_down', { n: i + 1 })} data-testid="idp-rule-down">
                              <IconArrowDown size={16} />
                            </ActionIcon>
                            <ActionIcon variant="subtle" color="red" onClick={() => setRules(d.rules.filter((_, j) => j !== i))} aria-label={t('admin.identity.rule_remove', { n: i + 1 })} data-testid="idp-rule-remove">
                              <IconTrash size={16} />
                            </ActionIcon>
                          </Group>
                        </Group>
                        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
                          <TextInput label={t('admin.identity.rule_attribute')} placeholder="groups" value={r.attribute} onChange={(e) => setRule(i, { attribute: e.currentTarget.value })} required maxLength={128} data-testid="idp-rule-attribute" />
                          <TextInput label={t('admin.identity.rule_value')} placeholder="cn=teachers,*" value={r.value} onChange={(e) => setRule(i, { value: e.currentTarget.value })} required maxLength={512} data-testid="idp-rule-value" />
                          <Select label={t('admin.identity.rule_group')} data={groupOptions} value={r.group_id || null} onChange={(v) => setRule(i, { group_id: v ?? '' })} searchable required nothingFoundMessage={t('admin.identity.no_groups')} data-testid="idp-rule-group" />
                          <Select label={t('admin.identity.rule_role')} data={roleOptions} value={r.role} onChange={(v) => v && setRule(i, { role: v as TRole })} allowDeselect={false} error={above ? t('admin.identity.rule_above', { role: t(`roles.${d.max_role}`) }) : undefined} data-testid="idp-rule-role" />
                        </SimpleGrid>
                        {failed && (
                          <Text size="sm" c="red" role="alert" data-testid="idp-rule-error">
                            {failed}
                          </Text>
                        )}
                      </Stack>
                    </Paper>
                  );
                })}
                <Group>
                  <Button
                    variant="default"
                    leftSection={<IconPlus size={16} />}
                    onClick={() => setRules([...d.rules, { key: ruleKey(), attribute: 'groups', value: '', group_id: '', role: 'user' }])}
                    disabled={d.rules.length >= 100}
                    data-testid="idp-rule-add"
                  >
                    {t('admin.identity.rule_add')}
                  </Button>
                </Group>
                <Radio.Group label={t('admin.identity.unmatched')} value={d.unmatched} onChange={(v) => set({ unmatched: v as Draft['unmatched'] })} data-testid="idp-form-unmatched">
                  <Stack gap={6} mt={6}>
                    <Radio value="refuse" label={t('admin.identity.unmatched_refuse')} data-testid="idp-form-unmatched-refuse" />
                    <Radio value="register" label={t('admin.identity.unmatched_register')} data-testid="idp-form-unmatched-register" />
                  </Stack>
                </Radio.Group>
                <Switch label={t('admin.identity.update_on_signin')} description={t('admin.identity.update_on_signin_help')} checked={d.update_on_signin} onChange={(e) => set({ update_on_signin: e.currentTarget.checked })} data-testid="idp-form-update" />
              </Stack>
            </Tabs.Panel>
          </Tabs>
          <FormFooter error={error} busy={busy} onClose={onClose} testId="idp-form" />
        </Stack>
      </form>
    </Modal>
  );
}
