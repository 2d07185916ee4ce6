import { useCallback, useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { Alert, Badge, Button, Card, Group, Progress, Skeleton, Stack, Text, ThemeIcon, Timeline, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCheck, IconCopy, IconDatabase, IconLock, IconShieldCheck, IconTemplate } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TTemplate } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { domainInfoQuery } from '../../entities/domain/api';
import { diskLabel } from '../../entities/domain/fields';
import { checkNewTemplateQuota, createTemplate, OWN_TEMPLATES_KEY, templateQuery } from './api';
import { useTemplatesLive } from './live';
import { TemplateForm, type TemplateFormValues } from './TemplateForm';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';
import '../../i18n/areas/content';

/** The job's steps as the server reports its percentage (reference §4.3). */
const STEPS = [
  { at: 5, key: 'moving', icon: <IconDatabase size={14} /> },
  { at: 35, key: 'overlay', icon: <IconCopy size={14} /> },
  { at: 65, key: 'verifying', icon: <IconShieldCheck size={14} /> },
  { at: 100, key: 'done', icon: <IconCheck size={14} /> },
] as const;
export const REDIRECT_AFTER_MS = 1800;

function CreationProgress({ template, failed }: { template: TTemplate | null; failed: boolean }) {
  const { t } = useTranslation();
  const done = template?.status === 'Stopped';
  const percent = done ? 100 : (template?.progress ?? 0);
  const active = STEPS.filter((s) => percent >= s.at).length - 1;
  return (
    <Card withBorder padding="xl" radius="lg" data-testid="template-progress" data-done={done || undefined}>
      <Group gap="md" mb="md" wrap="nowrap">
        <ThemeIcon size={44} radius="xl" variant="light" color={failed ? 'red' : done ? 'teal' : 'indigo'}>
          {failed ? <IconAlertTriangle size={24} /> : done ? <IconCheck size={24} /> : <IconTemplate size={24} />}
        </ThemeIcon>
        <div>
          <Title order={2} size="h4">
            {failed ? t('templates.new.failed_title') : done ? t('templates.new.ready_title') : t('templates.new.working_title')}
          </Title>
          <Text size="sm" c="dimmed">
            {failed ? t('errors.template_creation_failed') : done ? t('templates.new.ready_body') : t('templates.new.working_body')}
          </Text>
        </div>
      </Group>
      <Group gap="sm" wrap="nowrap" mb="lg">
        <Progress value={failed ? 100 : percent} color={failed ? 'red' : done ? 'teal' : 'indigo'} size="lg" radius="xl" animated={!done && !failed} striped={!done && !failed} style={{ flex: 1 }} aria-label={t('templates.new.progress')} />
        <Text size="sm" fw={600} w={44} ta="right" data-testid="template-progress-value">
          {percent}%
        </Text>
      </Group>
      {!failed && (
        <Timeline active={Math.max(0, active)} bulletSize={24} lineWidth={2}>
          {STEPS.map((s) => (
            <Timeline.Item key={s.key} bullet={s.icon} title={t(`templates.new.steps.${s.key}`)}>
              <Text size="xs" c="dimmed">
                {t(`templates.new.steps_hint.${s.key}`)}
              </Text>
            </Timeline.Item>
          ))}
        </Timeline>
      )}
    </Card>
  );
}

/** /templates/new?desktop=…: a template from a stopped desktop, with the work shown as it goes. */
export default function NewTemplatePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [params] = useSearchParams();
  const desktopId = params.get('desktop') ?? '';
  const info = useQuery({ ...domainInfoQuery(desktopId), enabled: Boolean(desktopId) });
  const quota = useQuery({ queryKey: ['templates', 'new', 'check_quota'], queryFn: checkNewTemplateQuota, retry: false, staleTime: 0 });
  const [createdId, setCreatedId] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const [nameError, setNameError] = useState<string | null>(null);
  const redirected = useRef(false);


  // The job's progress arrives live (template_update); a poll covers a lost event.
  const created = useQuery({
    ...templateQuery(createdId ?? ''),
    enabled: Boolean(createdId) && !failed,
    refetchInterval: (q) => (q.state.data?.status === 'Stopped' ? false : 1000),
    retry: false,
    meta: HANDLES_ERROR,
  });
  const onEvent = useCallback(
    (event: 'add' | 'update' | 'delete', id: string) => {
      if (id === createdId && event === 'delete') setFailed(true);
    },
    [createdId],
  );
  useTemplatesLive(onEvent);
  useEffect(() => {
    if (created.error instanceof HttpError && created.error.status === 404) setFailed(true);
  }, [created.error]);
  const template = created.data ?? null;
  // The redirect's timer lives until it fires or the page goes: a re-run of the effect below (a new `t`
  // once a catalogue loads, a new `navigate`) must not clear it, since `redirected` keeps it from being set again.
  const redirectTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(redirectTimer.current), []);
  useEffect(() => {
    if (template?.status !== 'Stopped' || redirected.current) return;
    redirected.current = true;
    notifySuccess(t('templates.new.created', { name: template.name }));
    void qc.invalidateQueries({ queryKey: OWN_TEMPLATES_KEY });
    redirectTimer.current = setTimeout(() => void navigate('/desktops'), REDIRECT_AFTER_MS);
  }, [template?.status, template?.name, navigate, qc, t]);

  const create = useMutation({
    mutationFn: (v: TemplateFormValues) => createTemplate({ desktop_id: desktopId, ...v }),
    onSuccess: ({ id }) => setCreatedId(id),
    onError: (err) => {
      if (err instanceof HttpError && err.code === 'new_template_name_exists') setNameError(t('errors.new_template_name_exists'));
      handleError(err);
    },
  });

  if (!desktopId || info.isError)
    return (
      <EmptyState
        icon={<IconAlertTriangle size={30} />}
        title={t('templates.new.no_desktop_title')}
        body={t('templates.new.no_desktop_body')}
        action={
          <Button variant="default" onClick={() => void navigate('/desktops')}>
            {t('domain_edit.back')}
          </Button>
        }
      />
    );

  const d = info.data;
  const blocked = d ? d.server || d.status !== 'Stopped' || d.kind !== 'desktop' : false;
  const overQuota = quota.error instanceof HttpError && quota.error.status === 428;
  const aside = d ? (
    <Card withBorder padding={0} radius="lg" style={{ overflow: 'hidden' }} data-testid="template-source">
      <img src={d.image.url} alt="" style={{ width: '100%', height: 180, objectFit: 'cover', display: 'block' }} />
      <Stack gap={6} p="lg">
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          {t('templates.new.from_desktop')}
        </Text>
        <Text fw={650}>{builtInText(t, d.name)}</Text>
        <Group gap={6}>
          <Badge variant="light" radius="sm">
            {t('templates.card.vcpus', { count: d.hardware.vcpus })}
          </Badge>
          <Badge variant="light" radius="sm">
            {t('templates.card.memory', { value: d.hardware.memory })}
          </Badge>
          <Badge variant="light" color="gray" radius="sm">
            {diskLabel(t, d.hardware.disk_size)}
          </Badge>
        </Group>
        <Text size="xs" c="dimmed" mt={4}>
          {t('templates.new.how')}
        </Text>
      </Stack>
    </Card>
  ) : (
    <Skeleton h={300} radius="lg" />
  );

  return (
    <>
      <PageHeader title={t('templates.new.heading')} subtitle={t('templates.new.subheading')} />
      {createdId ? (
        <Stack gap="lg" maw={720}>
          <CreationProgress template={template} failed={failed} />
          {failed && (
            <Group>
              <Button variant="default" onClick={() => void navigate('/desktops')}>
                {t('domain_edit.back')}
              </Button>
            </Group>
          )}
        </Stack>
      ) : (
        <>
          {blocked && d && (
            <Alert color="orange" icon={<IconLock size={18} />} mb="lg" data-testid="template-blocked">
              {t(d.server ? 'domain_edit.locked_server' : 'templates.new.must_stop')}
            </Alert>
          )}
          {overQuota && (
            <Alert color="orange" icon={<IconAlertTriangle size={18} />} mb="lg" data-testid="template-quota">
              {t(`errors.${(quota.error as HttpError).code}`, { defaultValue: t('errors.generic_error') })}
            </Alert>
          )}
          {d ? (
            <TemplateForm
              initial={{ name: d.name, description: d.description }}
              onSubmit={(v) => {
                setNameError(null);
                create.mutate(v);
              }}
              onCancel={() => void navigate('/desktops')}
              submitLabel={t('templates.new.submit')}
              submitIcon={<IconTemplate size={16} />}
              busy={create.isPending}
              disabled={blocked || overQuota}
              aside={aside}
              nameError={nameError}
            />
          ) : (
            <Skeleton h={420} radius="lg" />
          )}
        </>
      )}
    </>
  );
}
