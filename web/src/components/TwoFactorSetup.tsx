import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Code, CopyButton, Group, Image, SimpleGrid, Skeleton, Stack, Text, TextInput } from '@mantine/core';
import { IconAlertCircle, IconAlertTriangle, IconCheck, IconCopy, IconDownload } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { TWO_FACTOR_DIGITS, type TTwoFactorEnrolment } from '@vdi/contracts';
import { useAction } from '../lib/use-action';
import { downloadText } from '../lib/download';

/** A six-digit code field: numeric keyboard on phones, the browser's one-time-code autofill, focused. */
export function TotpCodeInput(props: { value: string; onChange: (v: string) => void; label?: string; testId: string; autoFocus?: boolean }) {
  const { t } = useTranslation();
  return (
    <TextInput
      label={props.label ?? t('two_factor.code')}
      value={props.value}
      onChange={(e) => props.onChange(e.currentTarget.value.replace(/[^\d]/g, '').slice(0, TWO_FACTOR_DIGITS))}
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern="[0-9]*"
      maxLength={TWO_FACTOR_DIGITS}
      placeholder="123456"
      autoFocus={props.autoFocus ?? true}
      data-autofocus
      required
      styles={{ input: { letterSpacing: '0.3em', fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 'var(--mantine-font-size-lg)' } }}
      data-testid={props.testId}
    />
  );
}

/**
 * Enrolment: starts (a new secret, pending), shows the QR code and the secret to type in, and confirms with a code of
 * the authenticator; then hands the recovery codes on.
 */
export function EnrolmentSteps(props: { start: () => Promise<TTwoFactorEnrolment>; confirm: (code: string) => Promise<string[]>; onEnrolled: (codes: string[]) => void }) {
  const { t } = useTranslation();
  const [enrolment, setEnrolment] = useState<TTwoFactorEnrolment | null>(null);
  const [code, setCode] = useState('');
  const starting = useAction();
  const confirming = useAction();
  const started = useRef(false);
  const { start } = props;
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    void starting.run(async () => setEnrolment(await start()));
  }, [start, starting]);
  if (starting.error) {
    return (
      <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid="two-factor-start-error">
        {starting.error}
      </Alert>
    );
  }
  if (!enrolment) return <Skeleton h={300} />;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void confirming.run(async () => props.onEnrolled(await props.confirm(code)));
      }}
    >
      <Stack gap="sm" data-testid="two-factor-enrolment">
        <Text size="sm">{t('two_factor.scan')}</Text>
        <Group justify="center">
          <Image src={enrolment.qr} alt={t('two_factor.qr_alt')} w={200} h={200} fit="contain" data-testid="two-factor-qr" />
        </Group>
        <Text size="sm" c="dimmed">
          {t('two_factor.type_instead')}
        </Text>
        <Group gap="xs" wrap="nowrap">
          <Code block style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap', letterSpacing: '0.1em' }} data-testid="two-factor-secret">
            {enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}
          </Code>
          <CopyButton value={enrolment.secret}>
            {({ copied, copy }) => (
              <Button variant="default" size="xs" onClick={copy} leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}>
                {t(copied ? 'two_factor.copied' : 'two_factor.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Text size="xs" c="dimmed">
          {t('two_factor.account_hint', { issuer: enrolment.issuer, account: enrolment.account })}
        </Text>
        <TotpCodeInput value={code} onChange={setCode} label={t('two_factor.confirm_code')} testId="two-factor-confirm-code" autoFocus={false} />
        {confirming.error && (
          <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid="two-factor-confirm-error">
            {confirming.error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={confirming.busy} disabled={code.length !== TWO_FACTOR_DIGITS} data-testid="two-factor-confirm">
            {t('two_factor.turn_on')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** Recovery codes, shown once: copy or download them now. */
export function RecoveryCodesList({ codes, onDone, doneLabel }: { codes: string[]; onDone: () => void; doneLabel?: string }) {
  const { t } = useTranslation();
  const text = codes.join('\n');
  const download = () => {
    downloadText(`${t('two_factor.recovery_file_title')}\n\n${text}\n`, 'text/plain', 'recovery-codes.txt');
  };
  return (
    <Stack gap="sm" data-testid="recovery-codes">
      <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} />}>
        {t('two_factor.recovery_once')}
      </Alert>
      <SimpleGrid cols={2} spacing="xs">
        {codes.map((c) => (
          <Code key={c} ta="center" fz="md" py={6} data-testid="recovery-code">
            {c}
          </Code>
        ))}
      </SimpleGrid>
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Group gap="xs">
          <CopyButton value={text}>
            {({ copied, copy }) => (
              <Button variant="default" onClick={copy} leftSection={copied ? <IconCheck size={16} /> : <IconCopy size={16} />} data-testid="recovery-copy">
                {t(copied ? 'two_factor.copied' : 'two_factor.copy')}
              </Button>
            )}
          </CopyButton>
          <Button variant="default" onClick={download} leftSection={<IconDownload size={16} />} data-testid="recovery-download">
            {t('two_factor.download')}
          </Button>
        </Group>
        <Button onClick={onDone} data-testid="recovery-done">
          {doneLabel ?? t('two_factor.saved_them')}
        </Button>
      </Group>
    </Stack>
  );
}
