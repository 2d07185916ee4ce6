import { useEffect, useState } from 'react';
import { ActionIcon, Badge, Button, Code, CopyButton, Group, Select, Stack, Table, Text, TextInput, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconCheck, IconCopy, IconKey, IconPlus, IconRefresh, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ROLES, type TAdminRegistrationCode, type TRole } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { userQuery, HANDLES_ERROR } from '../../../lib/queries';
import { EmptyState } from '../../../components/EmptyState';
import { PageHeader } from '../../../components/PageHeader';
import { useAction } from '../../../lib/use-action';
import { codesQuery, createCode, deleteCode, refreshPeople, resetCode, groupsQuery } from './api';
import { ConfirmDelete, fullBadge, RowAction, FormModal, ListTable } from '../shared/console';
import '../../../i18n/areas/admin';
import { builtInText } from '../../../lib/built-in-text';

function CodeForm({ opened, onClose, isAdmin }: { opened: boolean; onClose: () => void; isAdmin: boolean }) {
  const { t } = useTranslation();
  const [group, setGroup] = useState<string | null>(null);
  const [role, setRole] = useState<TRole>('user');
  const [description, setDescription] = useState('');
  const groups = useQuery({ ...groupsQuery(), enabled: opened, meta: HANDLES_ERROR });
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (opened) {
      setGroup(null);
      setRole('user');
      setDescription('');
      setError(null);
    }
  }, [opened, setError]);
  const save = () =>
    run(async () => {
      await createCode({ group: group!, role, description });
      await refreshPeople();
      notifySuccess(t('admin.codes.created'));
      onClose();
    });
  return (
    <FormModal opened={opened} onClose={onClose} title={t('admin.codes.new_title')} onSubmit={save} busy={busy} error={error} testId="code-form" saveLabel={t('admin.codes.create')} saveDisabled={!group}>
      <Select
        label={t('admin.users.group')}
        data={(groups.data?.items ?? []).map((g) => ({ value: g.id, label: isAdmin ? `${builtInText(t, g.name)} · ${builtInText(t, g.category_name)}` : builtInText(t, g.name) }))}
        value={group}
        onChange={setGroup}
        required
        searchable
        data-testid="code-form-group"
      />
      <Select
        label={t('admin.users.role')}
        data={ROLES.filter((r) => isAdmin || r !== 'admin').map((r) => ({ value: r, label: t(`roles.${r}`) }))}
        value={role}
        onChange={(v) => v && setRole(v as TRole)}
        allowDeselect={false}
        data-testid="code-form-role"
      />
      <TextInput label={t('admin.codes.description')} value={description} onChange={(e) => setDescription(e.currentTarget.value)} maxLength={500} />
    </FormModal>
  );
}

/** /isard-admin/registration_codes: codes that sign a person up into a group with a role. */
export default function CodesPage() {
  const { t } = useTranslation();
  const { data: me } = useQuery(userQuery);
  const isAdmin = me?.role === 'admin';
  const list = useQuery(codesQuery());
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<TAdminRegistrationCode | null>(null);
  const items = list.data?.items ?? [];
  const reset = async (c: TAdminRegistrationCode) => {
    try {
      await resetCode(c.code);
      await refreshPeople();
      notifySuccess(t('admin.codes.reset_done'));
    } catch (err) {
      handleError(err);
    }
  };
  return (
    <Stack gap="md">
      <PageHeader
        title={t('admin.nav.registration_codes')}
        subtitle={t('admin.codes.subtitle')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setCreating(true)} data-testid="codes-new">
            {t('admin.codes.new')}
          </Button>
        }
      />
      <ListTable
        pending={list.isPending}
        empty={items.length === 0 && (
          <EmptyState icon={<IconKey size={28} />} title={t('admin.codes.empty')} body={t('admin.codes.empty_body')} />
        )}
        minWidth={720}
        highlightOnHover
        verticalSpacing="sm"
        data-testid="codes-table"
        head={
          <Table.Tr>
            <Table.Th>{t('admin.codes.code')}</Table.Th>
            <Table.Th>{t('admin.users.group')}</Table.Th>
            <Table.Th>{t('admin.users.role')}</Table.Th>
            <Table.Th>{t('admin.codes.description')}</Table.Th>
            <Table.Th w={120} />
          </Table.Tr>
        }
      >
        {items.map((c) => (
          <Table.Tr key={c.code} data-testid="code-row" data-group={c.group_name}>
            <Table.Td>
              <Code fz="sm" data-testid="code-value">
                {c.code}
              </Code>
            </Table.Td>
            <Table.Td>
              <Text size="sm">{builtInText(t, c.group_name)}</Text>
              {isAdmin && (
                <Text size="xs" c="dimmed">
                  {builtInText(t, c.category_name)}
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Badge styles={fullBadge} variant="light" radius="sm">
                {t(`roles.${c.role}`)}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="sm" c="dimmed">
                {builtInText(t, c.description)}
              </Text>
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <CopyButton value={c.code}>
                  {({ copied, copy }) => (
                    <Tooltip label={t(copied ? 'admin.codes.copied' : 'admin.codes.copy')}>
                      <ActionIcon variant="subtle" color={copied ? 'teal' : undefined} onClick={copy} aria-label={t('admin.codes.copy')} data-testid="code-copy">
                        {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
                      </ActionIcon>
                    </Tooltip>
                  )}
                </CopyButton>
                <RowAction label={t('admin.codes.reset')} icon={<IconRefresh size={16} />} onClick={() => void reset(c)} testId="code-reset" />
                <RowAction label={t('admin.common.delete')} icon={<IconTrash size={16} />} color="red" onClick={() => setDeleting(c)} testId="code-delete" />
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </ListTable>
      <CodeForm opened={creating} onClose={() => setCreating(false)} isAdmin={isAdmin} />
      <ConfirmDelete
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('admin.codes.delete_title')}
        body={t('admin.codes.delete_body', { group: builtInText(t, deleting?.group_name ?? '') })}
        confirmLabel={t('admin.common.delete')}
        testId="code-delete"
        onConfirm={async () => {
          await deleteCode(deleting!.code);
          await refreshPeople();
        }}
      />
    </Stack>
  );
}
