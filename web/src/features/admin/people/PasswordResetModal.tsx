import { useEffect, useRef, useState } from 'react';
import { Alert, Badge, Button, Group, Modal, Progress, Stack, Table, Text } from '@mantine/core';
import { ScrollBox } from '../../../components/ScrollBox';
import { IconAlertTriangle, IconCircleCheck, IconFileTypeCsv, IconFileTypePdf, IconKey } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { PASSWORD_RESET_BATCH_MAX, type TAdminPasswordResetAnswer, type TCredentialSheet } from '@vdi/contracts';
import { HttpError } from '../../../lib/api';
import { handleError } from '../../../lib/error-handler';
import { downloadText } from '../../../lib/download';
import { builtInText } from '../../../lib/built-in-text';
import { credentialsSheet, refreshPeople, resetPasswords } from './api';
import { fullBadge, useCodeText } from '../shared/console';
import '../../../i18n/areas/admin';

/** Download buttons whose words wrap on a phone instead of being cut. */
const WRAPPING = { root: { height: 'auto', minHeight: 36, maxWidth: '100%' }, label: { whiteSpace: 'normal' } } as const;

/** Users per call: small enough for a progress bar that moves on a class of 200. */
const CHUNK = Math.min(20, PASSWORD_RESET_BATCH_MAX);

type Result = { reset: TAdminPasswordResetAnswer['reset']; refused: TAdminPasswordResetAnswer['refused']; signInUrl: string | null };

/**
 * Classroom accounts: one-time passwords for the selected users, in chunks with a progress bar, then
 * what was done (n reset, m refused with why) and the credentials sheet to download (CSV, PDF). The
 * passwords live only in this dialog: closing it forgets them.
 */
export function PasswordResetModal({ ids, onClose, onDone }: { ids: string[] | null; onClose: () => void; onDone: () => void }) {
  const { t } = useTranslation();
  const codeText = useCodeText();
  const [done, setDone] = useState(0);
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<Result | null>(null);
  const [sheetBusy, setSheetBusy] = useState<'csv' | 'pdf' | null>(null);
  const cancelled = useRef(false);
  const opened = ids !== null;
  const count = ids?.length ?? 0;

  useEffect(() => {
    if (opened) {
      setDone(0);
      setRunning(false);
      setResult(null);
      cancelled.current = false;
    }
  }, [opened]);

  const start = async () => {
    if (!ids) return;
    setRunning(true);
    const out: Result = { reset: [], refused: [], signInUrl: null };
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      if (cancelled.current) break;
      try {
        const answer = await resetPasswords(chunk);
        out.reset.push(...answer.reset);
        out.refused.push(...answer.refused);
        out.signInUrl = answer.sign_in_url;
      } catch (err) {
        // The rest is not done: each one refused with the call's reason, and the batch stops here.
        const code = err instanceof HttpError ? err.code : 'generic_error';
        out.refused.push(...ids.slice(i).map((id) => ({ id, username: null, name: null, description_code: code })));
        handleError(err);
        break;
      }
      setDone(Math.min(ids.length, i + chunk.length));
    }
    setRunning(false);
    setResult(out);
    onDone();
    await refreshPeople();
  };

  const sheet = async (format: 'csv' | 'pdf') => {
    if (!result) return;
    setSheetBusy(format);
    try {
      const body: TCredentialSheet = {
        format,
        rows: result.reset.map((r) => ({ name: r.name, username: r.username, password: r.password, organisation: builtInText(t, r.organisation) })),
        labels: {
          title: t('admin.users.accounts.sheet_title'),
          name: t('admin.users.name'),
          username: t('admin.users.username'),
          password: t('admin.users.accounts.one_time_password'),
          address: t('admin.users.accounts.address'),
          organisation: t('admin.users.category'),
          change_hint: t('admin.users.accounts.change_hint'),
        },
      };
      const file = await credentialsSheet(body);
      downloadText(file, format === 'csv' ? 'text/csv' : 'application/pdf', `${t('admin.users.accounts.file_name')}.${format}`);
    } catch (err) {
      handleError(err);
    } finally {
      setSheetBusy(null);
    }
  };

  const close = () => {
    cancelled.current = true;
    onClose();
  };
  const progress = count ? (done / count) * 100 : 0;

  return (
    <Modal opened={opened} onClose={close} title={t('admin.users.accounts.title', { count })} size="lg" centered closeOnClickOutside={!running && !result}>
      <Stack gap="sm" data-testid="accounts-dialog">
        {!running && !result && (
          <>
            <Text size="sm">{t('admin.users.accounts.intro', { count })}</Text>
            <Text size="sm" c="dimmed">
              {t('admin.users.accounts.only_local')}
            </Text>
          </>
        )}
        {running && (
          <Stack gap={6} data-testid="accounts-progress" data-done={done} data-total={count}>
            <Progress value={progress} animated aria-label={t('admin.users.accounts.progress', { done, count })} />
            <Text size="sm" aria-live="polite">
              {t('admin.users.accounts.progress', { done, count })}
            </Text>
          </Stack>
        )}
        {result && (
          <>
            <Alert
              color={result.refused.length ? 'yellow' : 'teal'}
              icon={result.refused.length ? <IconAlertTriangle size={16} /> : <IconCircleCheck size={16} />}
              data-testid="accounts-result"
              data-reset={result.reset.length}
              data-refused={result.refused.length}
            >
              {t('admin.users.accounts.result', { reset: result.reset.length, refused: result.refused.length })}
            </Alert>
            {result.refused.length > 0 && (
              <ScrollBox mah={180} label={t('admin.users.accounts.result', { reset: result.reset.length, refused: result.refused.length })}>
                <Table striped withTableBorder fz="sm" data-testid="accounts-refused">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('admin.users.username')}</Table.Th>
                      <Table.Th>{t('admin.users.accounts.reason')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {result.refused.map((r) => (
                      <Table.Tr key={r.id} data-testid="accounts-refused-row" data-username={r.username ?? ''} data-code={r.description_code}>
                        <Table.Td>
                          <Text size="sm" fw={600}>
                            {r.username ?? '—'}
                          </Text>
                          {r.name && (
                            <Text size="xs" c="dimmed">
                              {r.name}
                            </Text>
                          )}
                        </Table.Td>
                        <Table.Td>
                          <Group gap={6} wrap="nowrap" align="flex-start">
                            <Badge styles={fullBadge} size="xs" color="red" variant="light">
                              {t('admin.users.accounts.refused')}
                            </Badge>
                            <Text size="xs">{codeText(r.description_code)}</Text>
                          </Group>
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollBox>
            )}
            {result.reset.length > 0 && (
              <>
                {result.signInUrl === null && (
                  <Alert color="red" icon={<IconAlertTriangle size={16} />} data-testid="accounts-no-address">
                    {t('errors.public_url_not_configured')}
                  </Alert>
                )}
                <Text size="sm" data-testid="accounts-keep-now">
                  {t('admin.users.accounts.download_now')}
                </Text>
                <Group gap="sm">
                  <Button
                    variant="light"
                    styles={WRAPPING}
                    py={6}
                    leftSection={<IconFileTypePdf size={16} />}
                    loading={sheetBusy === 'pdf'}
                    disabled={result.signInUrl === null || sheetBusy !== null}
                    onClick={() => void sheet('pdf')}
                    data-testid="accounts-pdf"
                  >
                    {t('admin.users.accounts.pdf')}
                  </Button>
                  <Button
                    variant="default"
                    styles={WRAPPING}
                    py={6}
                    leftSection={<IconFileTypeCsv size={16} />}
                    loading={sheetBusy === 'csv'}
                    disabled={result.signInUrl === null || sheetBusy !== null}
                    onClick={() => void sheet('csv')}
                    data-testid="accounts-csv"
                  >
                    {t('admin.users.accounts.csv')}
                  </Button>
                </Group>
              </>
            )}
          </>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={close} data-testid="accounts-close">
            {t(result ? 'common.close' : 'common.cancel')}
          </Button>
          {!result && (
            <Button color="orange" leftSection={<IconKey size={16} />} loading={running} onClick={() => void start()} data-testid="accounts-run">
              {t('admin.users.accounts.run', { count })}
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
