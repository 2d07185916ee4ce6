import { useCallback, useMemo, useState } from 'react';
import { Alert, Badge, Button, Card, Group, Modal, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { IconAlertCircle, IconKey, IconShieldCheck, IconShieldOff } from '@tabler/icons-react';
import { ZRecoveryCodes, ZTwoFactorEnrolment, ZTwoFactorStatus } from '@vdi/contracts';
import { api } from '../../lib/api';
import { notifySuccess } from '../../lib/error-handler';
import { useAction } from '../../lib/use-action';
import { EnrolmentSteps, RecoveryCodesList, TotpCodeInput } from '../../components/TwoFactorSetup';

const STATUS_KEY = ['user', 'two-factor'] as const;
const statusQuery = { queryKey: STATUS_KEY, queryFn: () => api.get('/user/two-factor', ZTwoFactorStatus) };

/** A code (authenticator or recovery) asked before a change: new recovery codes, turning it off. */
function CodeModal(props: { opened: boolean; title: string; body: string; action: string; color?: string; testId: string; onClose: () => void; submit: (code: string) => Promise<void> }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const { busy, error, run } = useAction();
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} centered data-testid={props.testId}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await props.submit(code);
            setCode('');
          });
        }}
      >
        <Stack gap="sm">
          <Text size="sm">{props.body}</Text>
          <TotpCodeInput value={code} onChange={setCode} testId={`${props.testId}-code`} />
          {error && (
            <Alert color="red" icon={<IconAlertCircle size={18} />} role="alert" data-testid={`${props.testId}-error`}>
              {error}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={props.onClose}>
              {t('common.cancel')}
            </Button>
            <Button type="submit" color={props.color} loading={busy} disabled={code.length !== 6} data-testid={`${props.testId}-submit`}>
              {props.action}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** The profile's two-factor sign-in: turn on (QR, code, recovery codes), new recovery codes, turn off (a code each). */
export function TwoFactorCard() {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const status = useQuery(statusQuery);
  const [enrolling, setEnrolling] = useState(false);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [asking, setAsking] = useState<'regenerate' | 'disable' | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: STATUS_KEY });
  const start = useCallback(() => api.post('/user/two-factor/enrolment', {}, ZTwoFactorEnrolment), []);
  const confirm = useCallback(async (code: string) => (await api.post('/user/two-factor/enrolment/confirm', { code }, ZRecoveryCodes)).recovery_codes, []);
  const dateFmt = useMemo(() => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium' }), [i18n.language]);
  const s = status.data;
  if (!s || !s.available) return null;
  return (
    <Card withBorder padding="lg" data-testid="two-factor-card">
      <Group justify="space-between" mb="xs" wrap="wrap" gap="xs">
        <Group gap="xs">
          <Title order={2} size="h4">
            {t('two_factor.title')}
          </Title>
          <Badge variant="light" color={s.enabled ? 'teal' : 'gray'} data-testid="two-factor-state">
            {t(s.enabled ? 'two_factor.on' : 'two_factor.off')}
          </Badge>
          {s.required && (
            <Badge variant="light" color="orange">
              {t('two_factor.required_badge')}
            </Badge>
          )}
        </Group>
        {!s.enabled && (
          <Button leftSection={<IconShieldCheck size={16} />} onClick={() => setEnrolling(true)} data-testid="two-factor-enable">
            {t('two_factor.turn_on')}
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed" mb={s.enabled ? 'sm' : 0}>
        {t(s.enabled ? 'two_factor.intro_on' : 'two_factor.intro_off')}
      </Text>
      {s.enabled && (
        <Stack gap="xs">
          <Text size="sm" data-testid="two-factor-details">
            {t('two_factor.since', { date: s.enabled_at ? dateFmt.format(new Date(s.enabled_at)) : '—' })} · {t('two_factor.codes_left', { count: s.recovery_codes_left })}
          </Text>
          {s.recovery_codes_left <= 3 && (
            <Alert color="orange" variant="light" icon={<IconAlertCircle size={18} />}>
              {t('two_factor.codes_low')}
            </Alert>
          )}
          <Group gap="sm">
            <Button variant="light" leftSection={<IconKey size={16} />} onClick={() => setAsking('regenerate')} data-testid="two-factor-regenerate">
              {t('two_factor.new_codes')}
            </Button>
            {!s.required && (
              <Button variant="subtle" color="red" leftSection={<IconShieldOff size={16} />} onClick={() => setAsking('disable')} data-testid="two-factor-disable">
                {t('two_factor.turn_off')}
              </Button>
            )}
          </Group>
          {s.required && (
            <Text size="xs" c="dimmed">
              {t('two_factor.required_hint')}
            </Text>
          )}
        </Stack>
      )}
      <Modal opened={enrolling} onClose={() => setEnrolling(false)} title={t('two_factor.enrol_heading')} centered size="lg" data-testid="two-factor-enrol-modal">
        {enrolling && (
          <EnrolmentSteps
            start={start}
            confirm={confirm}
            onEnrolled={(c) => {
              setEnrolling(false);
              setCodes(c);
              void refresh();
            }}
          />
        )}
      </Modal>
      <Modal opened={codes !== null} onClose={() => setCodes(null)} title={t('two_factor.recovery_heading')} centered size="lg" closeOnClickOutside={false} data-testid="recovery-modal">
        {codes && <RecoveryCodesList codes={codes} onDone={() => setCodes(null)} />}
      </Modal>
      <CodeModal
        opened={asking === 'regenerate'}
        title={t('two_factor.new_codes')}
        body={t('two_factor.new_codes_body')}
        action={t('two_factor.new_codes')}
        testId="two-factor-regenerate-modal"
        onClose={() => setAsking(null)}
        submit={async (code) => {
          const made = await api.post('/user/two-factor/recovery-codes', { code }, ZRecoveryCodes);
          setAsking(null);
          setCodes(made.recovery_codes);
          await refresh();
        }}
      />
      <CodeModal
        opened={asking === 'disable'}
        title={t('two_factor.turn_off')}
        body={t('two_factor.turn_off_body')}
        action={t('two_factor.turn_off')}
        color="red"
        testId="two-factor-disable-modal"
        onClose={() => setAsking(null)}
        submit={async (code) => {
          await api.post('/user/two-factor/disable', { code });
          setAsking(null);
          await refresh();
          notifySuccess(t('two_factor.turned_off'));
        }}
      />
    </Card>
  );
}
