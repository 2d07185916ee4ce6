import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import {
  Accordion,
  Alert,
  Badge,
  Button,
  Card,
  CloseButton,
  Group,
  ScrollArea,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Text,
  Textarea,
  TextInput,
  ThemeIcon,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAdjustments, IconAlertTriangle, IconCircleCheckFilled, IconDeviceDesktopPlus, IconSearch, IconTemplate } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import {
  DEFAULT_HARDWARE,
  DOMAIN_DESCRIPTION_MAX,
  DOMAIN_NAME_MAX,
  DOMAIN_NAME_MIN,
  isMemoryStep,
  MEMORY_STEP_GB,
  type TAllowedTemplate,
  type TDomainInfo,
} from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { rules } from '../../lib/validation';
import { checkNewDesktopQuota, createDesktop, domainInfoQuery, hardwareAllowedQuery, templatesForNewQuery } from '../../entities/domain/api';
import { guestNetOf, HardwareSteps, useItemLabel, ViewersField, type GuestNet, type HardwareValue } from '../../entities/domain/fields';
import classes from '../../entities/domain/Domains.module.css';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';
import '../../i18n/areas/content';

/** The template's hardware, within what this user may choose. */
function startingHardware(info: TDomainInfo, quota: { memory: number; vcpus: number; desktops_disk_size: number }): HardwareValue {
  const maxMem = Math.floor(quota.memory / MEMORY_STEP_GB) * MEMORY_STEP_GB;
  return {
    vcpus: Math.max(1, Math.min(info.hardware.vcpus, Math.floor(quota.vcpus))),
    memory: info.hardware.memory > quota.memory ? Math.max(MEMORY_STEP_GB, maxMem) : info.hardware.memory,
    disk_size: Math.max(DEFAULT_HARDWARE.disk_size, Math.ceil(info.hardware.disk_size)),
  };
}

function TemplateTile({ tpl, checked, onPick }: { tpl: TAllowedTemplate; checked: boolean; onPick: () => void }) {
  const { t } = useTranslation();
  return (
    <UnstyledButton
      component="div"
      role="radio"
      aria-checked={checked}
      tabIndex={0}
      onClick={onPick}
      onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), onPick())}
      className={classes.templateCard}
      data-checked={checked || undefined}
      data-testid="new-desktop-template"
      data-template-name={tpl.name}
      style={{ border: '1px solid var(--mantine-color-default-border)', borderRadius: 'var(--mantine-radius-lg)', background: 'var(--mantine-color-body)' }}
    >
      <div className={classes.cover}>
        <img src={tpl.image.url} alt="" loading="lazy" />
        {checked && (
          <ThemeIcon className={classes.coverCheck} radius="xl" size={26} color="indigo">
            <IconCircleCheckFilled size={18} />
          </ThemeIcon>
        )}
      </div>
      <Stack gap={4} p="sm">
        <Text fw={600} size="sm" lineClamp={1}>
          {builtInText(t, tpl.name)}
        </Text>
        <Text size="xs" c="dimmed" lineClamp={2} mih={32}>
          {builtInText(t, tpl.description) || t('new_desktop.no_description')}
        </Text>
        <Badge variant="light" color="gray" size="xs" radius="sm" style={{ alignSelf: 'flex-start', textTransform: 'none' }}>
          {t('new_desktop.by', { name: tpl.user_name })}
        </Badge>
      </Stack>
    </UnstyledButton>
  );
}

export default function NewDesktopPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [params] = useSearchParams();
  const templates = useQuery(templatesForNewQuery);
  const allowed = useQuery(hardwareAllowedQuery);
  // Its refusal is this page's own banner (one message, not a dialog on top of it).
  const quotaCheck = useQuery({ queryKey: ['desktop', 'new', 'check_quota'], queryFn: checkNewDesktopQuota, staleTime: 0, retry: false, meta: HANDLES_ERROR });
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search, 150);
  const [picked, setPicked] = useState<string | null>(params.get('template'));
  const info = useQuery({ ...domainInfoQuery(picked ?? ''), enabled: Boolean(picked), meta: HANDLES_ERROR });
  const [hw, setHw] = useState<HardwareValue>({ ...DEFAULT_HARDWARE });
  const [diskBus, setDiskBus] = useState<string>('default');
  const [boot, setBoot] = useState<string>('disk');
  const [guest, setGuest] = useState<GuestNet>({ viewers: ['browser_vnc'], interfaces: ['default'], credentials: { username: '', password: '' } });
  const [viewerError, setViewerError] = useState<string | null>(null);
  const busLabel = useItemLabel('disk_bus');
  const bootLabel = useItemLabel('boot_order');
  const r = rules(t);

  const form = useForm({
    mode: 'controlled',
    initialValues: { name: '', description: '' },
    validate: {
      name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      description: r.maxLength(DOMAIN_DESCRIPTION_MAX),
    },
  });


  // A template was picked: start from its hardware and viewers.
  const quota = allowed.data?.quota;
  useEffect(() => {
    const i = info.data;
    if (!i || !quota) return;
    setHw(startingHardware(i, quota));
    setDiskBus(i.hardware.disk_bus);
    setBoot(i.hardware.boot_order[0] ?? 'disk');
    setGuest(guestNetOf(i));
    setViewerError(null);
  }, [info.data, quota]);

  const list = useMemo(() => templates.data ?? [], [templates.data]);
  const shown = useMemo(() => {
    const q = term.trim().toLowerCase();
    return q ? list.filter((x) => `${x.name} ${x.description} ${builtInText(t, x.name)} ${builtInText(t, x.description)} ${x.user_name}`.toLowerCase().includes(q)) : list;
  }, [list, term, t]);
  // Only one template: it is the choice.
  useEffect(() => {
    if (!picked && list.length === 1) setPicked(list[0]!.id);
  }, [picked, list]);
  const template = list.find((x) => x.id === picked) ?? null;

  const create = useMutation({
    mutationFn: (values: { name: string; description: string }) =>
      createDesktop({
        name: values.name.trim(),
        description: values.description.trim(),
        template_id: picked!,
        hardware: {
          vcpus: hw.vcpus,
          memory: hw.memory,
          // Only a chosen growth: the template's own size needs no resize (nor quota room).
          ...(hw.disk_size > Math.ceil(info.data?.hardware.disk_size ?? 0) ? { disk_size: hw.disk_size } : {}),
          disk_bus: diskBus as 'default',
          boot_order: [boot as 'disk'],
          interfaces: guest.interfaces,
        },
        guest_properties: { viewers: Object.fromEntries(guest.viewers.map((v) => [v, { options: null }])) },
      }),
    onSuccess: (_answer, values) => {
      notifySuccess(t('new_desktop.created', { name: values.name.trim() }));
      void qc.invalidateQueries({ queryKey: ['desktops'] });
      void qc.invalidateQueries({ queryKey: ['user'], exact: true });
      void navigate('/desktops');
    },
    onError: (err) => {
      if (err instanceof HttpError && err.code === 'new_desktop_name_exists') form.setFieldError('name', t('errors.new_desktop_name_exists', { name: form.values.name }));
      handleError(err);
    },
  });

  const submit = form.onSubmit((values) => {
    if (!picked || !info.data) return;
    if (guest.viewers.length === 0) return setViewerError(t('errors.one_viewer_minimum'));
    create.mutate(values);
  });

  const overQuota = quotaCheck.error instanceof HttpError && quotaCheck.error.status === 428;
  const memoryNote = info.data && !isMemoryStep(info.data.hardware.memory) && hw.memory === info.data.hardware.memory;

  let picker;
  if (templates.isLoading)
    picker = (
      <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="md">
        {[0, 1, 2].map((i) => (
          <Skeleton key={i} h={190} radius="lg" />
        ))}
      </SimpleGrid>
    );
  else if (!list.length)
    picker = <EmptyState icon={<IconTemplate size={30} />} title={t('new_desktop.no_templates_title')} body={t('new_desktop.no_templates_body')} />;
  else if (!shown.length)
    picker = (
      <Text size="sm" c="dimmed" ta="center" py="xl" data-testid="new-desktop-no-match">
        {t('new_desktop.no_match')}
      </Text>
    );
  else
    picker = (
      <ScrollArea.Autosize mah={460} type="auto" offsetScrollbars>
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="md" role="radiogroup" aria-label={t('new_desktop.template')} p={4}>
          {shown.map((tpl) => (
            <TemplateTile key={tpl.id} tpl={tpl} checked={tpl.id === picked} onPick={() => setPicked(tpl.id)} />
          ))}
        </SimpleGrid>
      </ScrollArea.Autosize>
    );

  return (
    <form onSubmit={submit} noValidate>
      <PageHeader title={t('new_desktop.heading')} subtitle={t('new_desktop.subheading')} />
      {overQuota && (
        <Alert color="orange" icon={<IconAlertTriangle size={18} />} mb="lg" title={t('new_desktop.quota_title')} data-testid="new-desktop-quota">
          <Group justify="space-between" gap="sm">
            <Text size="sm">{t(`errors.${(quotaCheck.error as HttpError).code}`, { defaultValue: t('errors.generic_error') })}</Text>
            <Button size="xs" variant="white" color="orange" onClick={() => void navigate('/profile')}>
              {t('quota_dialog.go_profile')}
            </Button>
          </Group>
        </Alert>
      )}
      {/* Over the quota nothing here can be used: the form is disabled under its banner. */}
      <fieldset disabled={overQuota} className={classes.plainFieldset} style={overQuota ? { opacity: 0.55 } : undefined} data-testid="new-desktop-form">
      <Stack gap="lg">
        <Card withBorder padding="lg" radius="lg">
          <Group justify="space-between" mb="md" wrap="wrap" gap="sm">
            <div>
              <Title order={2} size="h4">
                {t('new_desktop.step_template')}
              </Title>
              <Text size="sm" c="dimmed">
                {t('new_desktop.step_template_hint')}
              </Text>
            </div>
            <TextInput
              placeholder={t('new_desktop.search')}
              aria-label={t('new_desktop.search')}
              leftSection={<IconSearch size={16} />}
              value={search}
              onChange={(e) => setSearch(e.currentTarget.value)}
              rightSection={search ? <CloseButton size="sm" onClick={() => setSearch('')} aria-label={t('new_desktop.clear_search')} /> : null}
              w={{ base: '100%', sm: 280 }}
              data-testid="new-desktop-search"
            />
          </Group>
          {picker}
        </Card>

        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb="md">
              {t('new_desktop.step_name')}
            </Title>
            <Stack gap="md">
              <TextInput
                label={t('new_desktop.name')}
                description={t('new_desktop.name_hint')}
                required
                maxLength={DOMAIN_NAME_MAX + 10}
                data-testid="new-desktop-name"
                {...form.getInputProps('name')}
              />
              <Textarea
                label={t('new_desktop.description')}
                autosize
                minRows={3}
                maxRows={6}
                data-testid="new-desktop-description"
                {...form.getInputProps('description')}
              />
            </Stack>
          </Card>
          <Card withBorder padding="lg" radius="lg">
            <Title order={2} size="h4" mb={4}>
              {t('new_desktop.step_viewers')}
            </Title>
            <Text size="sm" c="dimmed" mb="md">
              {t('new_desktop.step_viewers_hint')}
            </Text>
            {picked && info.isLoading ? (
              <Skeleton h={160} />
            ) : (
              <ViewersField
                offered={allowed.data?.viewers}
                value={guest}
                onChange={(g) => {
                  setGuest(g);
                  setViewerError(null);
                }}
                error={viewerError}
                disabled={!picked}
              />
            )}
          </Card>
        </SimpleGrid>

        <Accordion variant="separated" radius="lg" chevronPosition="right">
          <Accordion.Item value="hardware">
            <Accordion.Control icon={<IconAdjustments size={18} />} data-testid="new-desktop-advanced">
              <Text fw={600}>{t('new_desktop.advanced')}</Text>
              <Text size="xs" c="dimmed">
                {t('new_desktop.advanced_hint')}
              </Text>
            </Accordion.Control>
            <Accordion.Panel>
              {allowed.data ? (
                <Stack gap="lg" pt="xs">
                  <HardwareSteps
                    value={hw}
                    onChange={setHw}
                    quota={allowed.data.quota}
                    minDisk={Math.max(1, Math.ceil(info.data?.hardware.disk_size ?? 1))}
                    disabled={!picked}
                  />
                  {memoryNote && (
                    <Text size="xs" c="dimmed">
                      {t('new_desktop.memory_from_template')}
                    </Text>
                  )}
                  <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
                    <Select
                      label={t('domain_edit.disk_bus')}
                      data={allowed.data.disk_bus.map((x) => ({ value: x.id, label: busLabel(x) }))}
                      value={diskBus}
                      onChange={(v) => v && setDiskBus(v)}
                      allowDeselect={false}
                      disabled={!picked}
                      data-testid="hw-disk-bus"
                    />
                    <Select
                      label={t('domain_edit.boot')}
                      data={allowed.data.boot_order.map((x) => ({ value: x.id, label: bootLabel(x) }))}
                      value={boot}
                      onChange={(v) => v && setBoot(v)}
                      allowDeselect={false}
                      disabled={!picked}
                      data-testid="hw-boot"
                    />
                  </SimpleGrid>
                </Stack>
              ) : (
                <Skeleton h={180} />
              )}
            </Accordion.Panel>
          </Accordion.Item>
        </Accordion>
      </Stack>
      </fieldset>

      <Group className={classes.actionBar} justify="space-between" wrap="wrap" gap="sm">
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <ThemeIcon variant="light" radius="md" size={34}>
            <IconDeviceDesktopPlus size={18} />
          </ThemeIcon>
          <div style={{ minWidth: 0 }}>
            <Text size="sm" fw={600} lineClamp={1} data-testid="new-desktop-summary">
              {template ? builtInText(t, template.name) : t('new_desktop.pick_first')}
            </Text>
            {template && (
              <Text size="xs" c="dimmed">
                {t('new_desktop.summary', { vcpus: hw.vcpus, memory: hw.memory, disk: hw.disk_size })}
              </Text>
            )}
          </div>
        </Group>
        <Group gap="sm">
          <Button variant="default" onClick={() => void navigate('/desktops')}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" leftSection={<IconDeviceDesktopPlus size={16} />} disabled={!picked || !info.data || !allowed.data || overQuota} loading={create.isPending} data-testid="new-desktop-create">
            {t('new_desktop.create')}
          </Button>
        </Group>
      </Group>
    </form>
  );
}
