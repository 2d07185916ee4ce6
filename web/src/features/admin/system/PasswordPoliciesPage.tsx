import { useState } from 'react';
import { ActionIcon, Alert, Badge, Button, Checkbox, Group, Modal, NumberInput, Paper, ScrollArea, Select, SimpleGrid, Skeleton, Stack, Table, Text, Tooltip } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconPencil, IconPlus, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { z } from 'zod';
import { ZCategoryPublic, type TPasswordPolicyRule } from '@vdi/contracts';
import { api } from '../../../lib/api';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { notifySuccess } from '../../../lib/error-handler';
import { PageHeader } from '../../../components/PageHeader';
import { saveSetting, settingQuery } from './api';
import { useSettingsLive } from './live';
import '../../../i18n/areas/admin-system';
import { builtInText } from '../../../lib/built-in-text';
import { HANDLES_ERROR } from '../../../lib/queries';

const ROLES = ['all', 'admin', 'manager', 'advanced', 'user'] as const;
const NUMBERS = ['length', 'uppercase', 'lowercase', 'digits', 'special_characters', 'old_passwords', 'expire'] as const;
const NEW_RULE: TPasswordPolicyRule = {
  category: 'all',
  role: 'all',
  length: 8,
  uppercase: 0,
  lowercase: 0,
  digits: 0,
  special_characters: 0,
  not_username: false,
  old_passwords: 0,
  expire: 0,
};
const isGeneral = (r: TPasswordPolicyRule) => r.category === 'all' && r.role === 'all';
const categoriesQuery = { queryKey: ['categories'], queryFn: () => api.get('/categories', z.array(ZCategoryPublic)), meta: HANDLES_ERROR } as const;

function RuleModal({ rule, taken, onClose, onSave }: { rule: TPasswordPolicyRule | null; taken: (r: TPasswordPolicyRule) => boolean; onClose: () => void; onSave: (r: TPasswordPolicyRule) => Promise<void> }) {
  const { t } = useTranslation();
  const categories = useQuery(categoriesQuery);
  const form = useForm<TPasswordPolicyRule>({
    initialValues: rule ?? NEW_RULE,
    validate: (v) => (taken(v) ? { role: t('admin_system.passwords.taken') } : {}),
  });
  const action = useAction();
  const general = rule !== null && isGeneral(rule);
  return (
    <Modal opened onClose={onClose} title={t(rule ? 'admin_system.passwords.edit' : 'admin_system.passwords.add')} size="lg">
      <form onSubmit={form.onSubmit((v) => action.run(() => onSave(v)))} noValidate>
        <SimpleGrid cols={{ base: 1, sm: 2 }} mb="md">
          <Select
            label={t('admin_system.passwords.category')}
            data={[{ value: 'all', label: t('admin_system.passwords.all_categories') }, ...(categories.data ?? []).map((c) => ({ value: c.id, label: builtInText(t, c.name) }))]}
            allowDeselect={false}
            disabled={general}
            data-testid="policy-category"
            {...form.getInputProps('category')}
          />
          <Select
            label={t('admin_system.passwords.role')}
            data={ROLES.map((r) => ({ value: r, label: t(`admin_system.passwords.roles.${r}`) }))}
            allowDeselect={false}
            disabled={general}
            data-testid="policy-role"
            {...form.getInputProps('role')}
          />
          {NUMBERS.map((n) => (
            <NumberInput
              key={n}
              label={t(`admin_system.passwords.fields.${n}`)}
              min={n === 'length' ? 1 : 0}
              max={n === 'expire' ? 3650 : n === 'length' ? 128 : 64}
              allowDecimal={false}
              data-testid={`policy-${n}`}
              {...form.getInputProps(n)}
            />
          ))}
        </SimpleGrid>
        <Checkbox label={t('admin_system.passwords.fields.not_username')} mb="md" {...form.getInputProps('not_username', { type: 'checkbox' })} />
        {action.error && (
          <Alert color="red" icon={<IconAlertCircle size={18} />} mb="md" role="alert">
            {action.error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('admin_system.cancel')}
          </Button>
          <Button type="submit" loading={action.busy} data-testid="policy-save">
            {t('admin_system.save')}
          </Button>
        </Group>
      </form>
    </Modal>
  );
}

/** Password policies per category and role, the most specific applying (`/isard-admin/settings/passwords`). */
export default function PasswordPoliciesPage() {
  const { t, i18n } = useTranslation();
  useSettingsLive();
  const query = useQuery(settingQuery('password_policies'));
  const categories = useQuery(categoriesQuery);
  const [editing, setEditing] = useState<{ rule: TPasswordPolicyRule | null } | null>(null);
  const remove = useAction();
  const items = query.data?.items ?? [];
  const categoryName = (id: string) => (id === 'all' ? t('admin_system.passwords.all_categories') : builtInText(t, categories.data?.find((c) => c.id === id)?.name ?? id));
  const store = async (next: TPasswordPolicyRule[]) => {
    await saveSetting('password_policies', { items: next });
    notifySuccess(t('admin_system.saved'));
  };
  const same = (a: TPasswordPolicyRule, b: TPasswordPolicyRule) => a.category === b.category && a.role === b.role;
  // A phone gets one card per policy instead of a wide table.
  const narrow = useMediaQuery('(max-width: 48em)');
  const actions = (r: TPasswordPolicyRule) => (
    <Group gap={4} justify="flex-end" wrap="nowrap">
      <Tooltip label={t('admin_system.passwords.edit')}>
        <ActionIcon variant="subtle" onClick={() => setEditing({ rule: r })} aria-label={t('admin_system.passwords.edit')}>
          <IconPencil size={16} />
        </ActionIcon>
      </Tooltip>
      {!isGeneral(r) && (
        <Tooltip label={t('admin_system.passwords.remove')}>
          <ActionIcon
            variant="subtle"
            color="red"
            loading={remove.busy}
            onClick={() => remove.run(() => store(items.filter((x) => !same(x, r))))}
            aria-label={t('admin_system.passwords.remove')}
          >
            <IconTrash size={16} />
          </ActionIcon>
        </Tooltip>
      )}
    </Group>
  );
  const value = (r: TPasswordPolicyRule, n: (typeof NUMBERS)[number]) => (n === 'expire' && r.expire === 0 ? '—' : r[n]);

  return (
    <>
      <PageHeader
        title={t('admin_system.passwords.heading')}
        subtitle={t('admin_system.passwords.subheading')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing({ rule: null })} disabled={!query.data} data-testid="policy-add">
            {t('admin_system.passwords.add')}
          </Button>
        }
      />
      {query.error ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_system.load_failed')} data-testid="policies-load-error">
          {errorMessage(t, query.error, (k) => i18n.exists(k))}
        </Alert>
      ) : query.isPending ? (
        <Skeleton height={200} radius="md" />
      ) : narrow ? (
        <Stack gap="xs">
          {remove.error && (
            <Alert color="red" role="alert">
              {remove.error}
            </Alert>
          )}
          {items.map((r) => (
            <Paper key={`${r.category}:${r.role}`} withBorder radius="md" p="sm" data-testid="policy-row">
              <Group justify="space-between" wrap="nowrap" align="flex-start">
                <div>
                  <Group gap={6}>
                    <Text fw={600} size="sm">
                      {categoryName(r.category)}
                    </Text>
                    {isGeneral(r) && (
                      <Badge size="xs" variant="light">
                        {t('admin_system.passwords.general')}
                      </Badge>
                    )}
                  </Group>
                  <Text size="xs" c="dimmed">
                    {t(`admin_system.passwords.roles.${r.role}`)}
                  </Text>
                </div>
                {actions(r)}
              </Group>
              <SimpleGrid cols={2} spacing={4} mt="xs">
                {NUMBERS.map((n) => (
                  <Text key={n} size="xs">
                    {t(`admin_system.passwords.short.${n}`)}: <b>{value(r, n)}</b>
                  </Text>
                ))}
                <Text size="xs">
                  {t('admin_system.passwords.short.not_username')}: <b>{r.not_username ? t('admin_system.yes') : t('admin_system.no')}</b>
                </Text>
              </SimpleGrid>
            </Paper>
          ))}
        </Stack>
      ) : (
        <Paper withBorder radius="md">
          {remove.error && (
            <Alert color="red" m="sm" role="alert">
              {remove.error}
            </Alert>
          )}
          <ScrollArea type="auto">
            <Table striped highlightOnHover verticalSpacing="sm" miw={860} data-testid="policies-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('admin_system.passwords.category')}</Table.Th>
                  <Table.Th>{t('admin_system.passwords.role')}</Table.Th>
                  {NUMBERS.map((n) => (
                    <Table.Th key={n}>{t(`admin_system.passwords.short.${n}`)}</Table.Th>
                  ))}
                  <Table.Th>{t('admin_system.passwords.short.not_username')}</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {items.map((r) => (
                  <Table.Tr key={`${r.category}:${r.role}`} data-testid="policy-row">
                    <Table.Td>
                      <Group gap={6} wrap="nowrap">
                        <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                          {categoryName(r.category)}
                        </Text>
                        {isGeneral(r) && (
                          <Badge size="xs" variant="light" style={{ flex: '0 0 auto' }}>
                            {t('admin_system.passwords.general')}
                          </Badge>
                        )}
                      </Group>
                    </Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{t(`admin_system.passwords.roles.${r.role}`)}</Table.Td>
                    {NUMBERS.map((n) => (
                      <Table.Td key={n}>{value(r, n)}</Table.Td>
                    ))}
                    <Table.Td>{r.not_username ? t('admin_system.yes') : t('admin_system.no')}</Table.Td>
                    <Table.Td>{actions(r)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea>
        </Paper>
      )}
      {editing && (
        <RuleModal
          rule={editing.rule}
          taken={(v) => items.some((x) => same(x, v) && !(editing.rule && same(editing.rule, x)))}
          onClose={() => setEditing(null)}
          onSave={async (v) => {
            await store(editing.rule ? items.map((x) => (same(x, editing.rule!) ? v : x)) : [...items, v]);
            setEditing(null);
          }}
        />
      )}
    </>
  );
}
