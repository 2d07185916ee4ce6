import { useEffect, useState } from 'react';
import { Alert, Badge, Button, Code, FileButton, Group, Modal, ScrollArea, Stack, Table, Text, Textarea } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck, IconFileUpload } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { USER_CSV_HEADER, type TAdminImportAnswer } from '@vdi/contracts';
import { useAction } from '../../../lib/use-action';
import { importUsers, refreshPeople } from './api';
import { fullBadge, useCodeText } from './shared';
import './texts';

/**
 * CSV import in two steps: a dry run lists every bad row with its reasons and writes nothing; then
 * the import creates the valid rows (one transaction each) and reports each row.
 */
export function ImportModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const [csv, setCsv] = useState('');
  const [preview, setPreview] = useState<TAdminImportAnswer | null>(null);
  const [result, setResult] = useState<TAdminImportAnswer | null>(null);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (opened) {
      setCsv('');
      setPreview(null);
      setResult(null);
      setError(null);
    }
  }, [opened, setError]);

  const check = () => run(async () => {
    setResult(null);
    setPreview(await importUsers(csv, true));
  });
  const doImport = () => run(async () => {
    const answer = await importUsers(csv, false);
    setResult(answer);
    setPreview(null);
    await refreshPeople();
  });
  const shown = result ?? preview;
  const bad = shown?.rows.filter((r) => r.status === 'error') ?? [];

  return (
    <Modal opened={opened} onClose={onClose} title={t('admin.import.title')} size="xl" centered>
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {t('admin.import.intro')} <Code>{USER_CSV_HEADER.join(',')}</Code>
        </Text>
        {!result && (
          <>
            <Group>
              <FileButton onChange={(f) => void f?.text().then((text) => { setCsv(text); setPreview(null); })} accept=".csv,text/csv">
                {(props) => (
                  <Button variant="light" leftSection={<IconFileUpload size={16} />} {...props} data-testid="import-file">
                    {t('admin.import.choose_file')}
                  </Button>
                )}
              </FileButton>
            </Group>
            <Textarea
              label={t('admin.import.content')}
              value={csv}
              onChange={(e) => {
                setCsv(e.currentTarget.value);
                setPreview(null);
              }}
              autosize
              minRows={4}
              maxRows={10}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 12 } }}
              data-testid="import-text"
            />
          </>
        )}
        {error && (
          <Alert color="red" icon={<IconAlertTriangle size={16} />} role="alert" data-testid="import-error">
            {error}
          </Alert>
        )}
        {shown && (
          <Alert
            color={result ? 'teal' : bad.length ? 'yellow' : 'teal'}
            icon={result || !bad.length ? <IconCircleCheck size={16} /> : <IconAlertTriangle size={16} />}
            data-testid={result ? 'import-result' : 'import-preview'}
            data-valid={shown.valid}
            data-invalid={shown.invalid}
            data-created={shown.created}
          >
            {result
              ? t('admin.import.created', { created: result.created, total: result.total, invalid: result.invalid })
              : t('admin.import.checked', { valid: shown.valid, total: shown.total, invalid: shown.invalid })}
          </Alert>
        )}
        {bad.length > 0 && (
          <ScrollArea.Autosize mah={260} type="auto">
            <Table striped withTableBorder fz="sm" data-testid="import-bad-rows">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('admin.import.line')}</Table.Th>
                  <Table.Th>{t('admin.users.username')}</Table.Th>
                  <Table.Th>{t('admin.import.reason')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {bad.map((r) => (
                  <Table.Tr key={r.line} data-testid="import-bad-row" data-line={r.line}>
                    <Table.Td>{r.line}</Table.Td>
                    <Table.Td>{r.username || '—'}</Table.Td>
                    <Table.Td>
                      <Stack gap={2}>
                        {r.errors.map((e, i) => (
                          <Group key={i} gap={6} wrap="nowrap">
                            <Badge styles={fullBadge} size="xs" color="red" variant="light">
                              {e.code}
                            </Badge>
                            <Text size="xs">{codeText(e.code, e.params)}</Text>
                          </Group>
                        ))}
                      </Stack>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea.Autosize>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose} data-testid="import-close">
            {t(result ? 'common.close' : 'common.cancel')}
          </Button>
          {!result && (
            <Button variant="light" onClick={() => void check()} loading={busy && !preview} disabled={!csv.trim()} data-testid="import-check">
              {t('admin.import.check')}
            </Button>
          )}
          {preview && preview.valid > 0 && (
            <Button onClick={() => void doImport()} loading={busy} data-testid="import-run">
              {t('admin.import.run', { count: preview.valid })}
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
