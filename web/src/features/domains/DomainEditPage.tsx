import { useState } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import {
  Alert,
  Badge,
  Button,
  Card,
  Checkbox,
  FileButton,
  Group,
  PasswordInput,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  IconAlertTriangle,
  IconCpu,
  IconDeviceFloppy,
  IconEye,
  IconKey,
  IconLock,
  IconPhoto,
  IconRefreshAlert,
  IconUpload,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import {
  applyViewerNetworkRules,
  DOMAIN_DESCRIPTION_MAX,
  DOMAIN_NAME_MAX,
  DOMAIN_NAME_MIN,
  IMAGE_UPLOAD_MAX_BYTES,
  type TDomainInfo,
  type TImageChoice,
} from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { rules } from '../../lib/validation';
import { domainInfoQuery, fileToBase64, hardwareAllowedQuery, installsQuery, setReservables, stockImagesQuery, updateDomain } from '../../entities/domain/api';
import { diskLabel, effectiveVideo, GpuVideoFields, gpuVideoOk, guestNetOf, HardwareSteps, useItemLabel, ViewersField, type GuestNet } from '../../entities/domain/fields';
import { useRecreateDisk } from '../../entities/domain/recreate';
import { PreferredHypervisorsCard } from '../../entities/hypervisor/PreferredHypervisors';
import classes from '../../entities/domain/Domains.module.css';
import { builtInText } from '../../lib/built-in-text';
import { userQuery } from '../../lib/queries';
import '../../i18n/areas/content';

type ImagePick = { choice: TImageChoice; url: string } | null;

function Section({ icon, title, hint, children, testId }: { icon: React.ReactNode; title: string; hint?: string; children: React.ReactNode; testId: string }) {
  return (
    <Card withBorder padding="lg" radius="lg" className={classes.section} data-testid={testId}>
      <Group gap="sm" mb={hint ? 4 : 'md'} wrap="nowrap">
        {icon}
        <Title order={2} size="h4">
          {title}
        </Title>
      </Group>
      {hint && (
        <Text size="sm" c="dimmed" mb="md">
          {hint}
        </Text>
      )}
      {children}
    </Card>
  );
}

/** Where the page was opened from (the console's desktop page passes `{back}`): a path of this portal only. */
const backFrom = (state: unknown) => {
  const back = (state as { back?: unknown } | null)?.back;
  return typeof back === 'string' && back.startsWith('/') && !back.startsWith('//') ? back : null;
};

function EditForm({ info }: { info: TDomainInfo }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const allowed = useQuery(hardwareAllowedQuery);
  const me = useQuery(userQuery);
  const images = useQuery(stockImagesQuery(info.id));
  const installs = useQuery(installsQuery);
  const busLabel = useItemLabel('disk_bus');
  const bootLabel = useItemLabel('boot_order');
  const netLabel = useItemLabel('interfaces');
  const r = rules(t);
  const disabled = !info.editable;
  const back = backFrom(useLocation().state) ?? (info.kind === 'template' ? '/templates' : '/desktops');

  const form = useForm({
    mode: 'controlled',
    initialValues: { name: info.name, description: info.description, username: info.guest_properties.credentials.username, password: info.guest_properties.credentials.password },
    validate: {
      name: r.all(r.required, r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat),
      description: r.maxLength(DOMAIN_DESCRIPTION_MAX),
      username: r.maxLength(100),
      password: r.maxLength(100),
    },
  });
  const [hw, setHw] = useState({ vcpus: info.hardware.vcpus, memory: info.hardware.memory, disk_size: info.hardware.disk_size });
  const [diskBus, setDiskBus] = useState(info.hardware.disk_bus);
  const [boot, setBoot] = useState(info.hardware.boot_order[0] ?? 'disk');
  const [install, setInstall] = useState<string | null>(info.hardware.install);
  const [guest, setGuest] = useState<GuestNet>(guestNetOf(info));
  const [fullscreen, setFullscreen] = useState(info.guest_properties.fullscreen);
  const [gpu, setGpu] = useState<string | null>(info.reservables.vgpus?.[0] ?? null);
  const [video, setVideo] = useState(info.hardware.videos[0] ?? 'default');
  const [image, setImage] = useState<ImagePick>(null);
  const [imageError, setImageError] = useState<string | null>(null);
  const [viewerError, setViewerError] = useState<string | null>(null);

  // Removing wireguard takes the RDP viewers and the custom credentials with it (spec core §5).
  const applyGuest = (next: GuestNet) => {
    setGuest(next);
    setViewerError(null);
    if (next.credentials !== guest.credentials) form.setValues({ username: next.credentials.username, password: next.credentials.password });
  };
  const toggleNet = (id: string, on: boolean) => {
    const interfaces = on ? [...guest.interfaces, id] : guest.interfaces.filter((x) => x !== id);
    applyGuest(applyViewerNetworkRules(guest, { ...guest, interfaces, credentials: { username: form.values.username, password: form.values.password } }));
  };
  const gpuOnlyOk = gpuVideoOk({ gpu, video }, guest.viewers);

  const save = useMutation({
    mutationFn: async (values: typeof form.values) => {
      const current = info.reservables.vgpus?.[0] ?? null;
      if (current !== gpu) await setReservables(info.id, gpu ? [gpu] : null);
      return updateDomain(info.id, {
        name: values.name.trim(),
        description: values.description.trim(),
        hardware: {
          vcpus: hw.vcpus,
          memory: hw.memory,
          disk_bus: diskBus as 'default',
          boot_order: [boot as 'disk'],
          interfaces: guest.interfaces,
          videos: [effectiveVideo({ gpu, video })],
          ...(install ? { install } : {}),
        },
        guest_properties: {
          viewers: Object.fromEntries(guest.viewers.map((v) => [v, { options: null }])),
          credentials: { username: values.username, password: values.password },
          fullscreen,
        },
        ...(image ? { image: image.choice } : {}),
      });
    },
    onSuccess: (updated) => {
      notifySuccess(t('domain_edit.saved', { name: updated.name }));
      void qc.invalidateQueries({ queryKey: ['desktops'] });
      void qc.invalidateQueries({ queryKey: ['templates'] });
      void qc.invalidateQueries({ queryKey: ['domain', info.id] });
      void navigate(back);
    },
    onError: (err) => {
      if (err instanceof HttpError && err.code === 'new_desktop_name_exists') form.setFieldError('name', t('errors.new_desktop_name_exists', { name: form.values.name }));
      handleError(err);
    },
  });

  const recreate = useRecreateDisk(info);

  const pickFile = async (file: File | null) => {
    setImageError(null);
    if (!file) return;
    if (file.size > IMAGE_UPLOAD_MAX_BYTES) return setImageError(t('errors.image_too_large'));
    if (!/^image\/(png|jpeg|gif|webp)$/.test(file.type)) return setImageError(t('errors.image_bad_format'));
    const data = await fileToBase64(file);
    setImage({ choice: { type: 'user', file: { filename: file.name, data } }, url: URL.createObjectURL(file) });
  };

  const submit = form.onSubmit((values) => {
    if (guest.viewers.length === 0) return setViewerError(t('errors.one_viewer_minimum'));
    if (!gpuOnlyOk) return setViewerError(t('errors.only_works_rdp'));
    save.mutate(values);
  });

  const shownImage = image?.url ?? info.image.url;
  const selectedImageId = image ? (image.choice.type === 'stock' ? image.choice.id : null) : info.image.id;

  return (
    <form onSubmit={submit} noValidate>
      <PageHeader
        title={t('domain_edit.heading', { name: builtInText(t, info.name) })}
        subtitle={t(info.kind === 'template' ? 'domain_edit.subheading_template' : 'domain_edit.subheading')}
      />
      {!info.editable && (
        <Alert color="orange" icon={<IconLock size={18} />} mb="lg" title={t('domain_edit.locked_title')} data-testid="edit-locked">
          {t(info.server ? 'domain_edit.locked_server' : 'domain_edit.locked_running')}
        </Alert>
      )}
      {info.limited_hardware && (
        <Alert color="yellow" icon={<IconAlertTriangle size={18} />} mb="lg" data-testid="edit-limited">
          {t('domain_edit.limited')}
        </Alert>
      )}
      <Stack gap="lg">
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
          <Section icon={<IconDeviceFloppy size={20} />} title={t('domain_edit.general')} testId="edit-general">
            <Stack gap="md">
              <TextInput label={t('new_desktop.name')} required disabled={disabled} data-testid="edit-name" {...form.getInputProps('name')} />
              <Textarea label={t('new_desktop.description')} autosize minRows={3} maxRows={6} disabled={disabled} data-testid="edit-description" {...form.getInputProps('description')} />
              <Group gap="xs">
                <Badge variant="light" color="gray" radius="sm" style={{ textTransform: 'none' }}>
                  {t('domain_edit.owner', { name: info.user_name })}
                </Badge>
                {info.template && (
                  <Badge variant="light" color="indigo" radius="sm" style={{ textTransform: 'none' }}>
                    {t('domain_edit.from_template', { name: builtInText(t, info.template.name) })}
                  </Badge>
                )}
              </Group>
            </Stack>
          </Section>

          <Section icon={<IconPhoto size={20} />} title={t('domain_edit.image')} hint={t('domain_edit.image_hint')} testId="edit-image">
            <Group align="flex-start" wrap="nowrap" gap="md">
              <div className={classes.preview} style={{ width: 150, flex: '0 0 150px' }}>
                <img src={shownImage} alt={t('domain_edit.image_current')} data-testid="edit-image-preview" />
              </div>
              <Stack gap="xs" style={{ flex: 1 }}>
                <FileButton onChange={(f) => void pickFile(f)} accept="image/png,image/jpeg,image/gif,image/webp" disabled={disabled}>
                  {(props) => (
                    <Button {...props} variant="default" leftSection={<IconUpload size={16} />} disabled={disabled} data-testid="edit-image-upload">
                      {t('domain_edit.upload')}
                    </Button>
                  )}
                </FileButton>
                <Text size="xs" c="dimmed">
                  {t('domain_edit.upload_hint')}
                </Text>
                {imageError && (
                  <Text size="xs" c="red" data-testid="edit-image-error">
                    {imageError}
                  </Text>
                )}
              </Stack>
            </Group>
            <SimpleGrid cols={6} spacing={8} mt="md">
              {(images.data ?? []).filter((i) => i.type === 'stock').map((img) => (
                <Tooltip key={img.id} label={img.name} withArrow openDelay={300}>
                  <button
                    type="button"
                    className={classes.imageTile}
                    data-checked={selectedImageId === img.id || undefined}
                    onClick={() => setImage({ choice: { type: 'stock', id: img.id }, url: img.url })}
                    disabled={disabled}
                    aria-label={img.name}
                    data-testid="edit-stock-image"
                  >
                    <img src={img.url} alt="" loading="lazy" />
                  </button>
                </Tooltip>
              ))}
              {images.isLoading && [0, 1, 2, 3, 4, 5].map((i) => <Skeleton key={i} style={{ aspectRatio: '16 / 9' }} />)}
            </SimpleGrid>
          </Section>
        </SimpleGrid>

        <Section icon={<IconEye size={20} />} title={t('domain_edit.viewers_title')} hint={t('new_desktop.step_viewers_hint')} testId="edit-viewers">
          <ViewersField value={guest} onChange={applyGuest} disabled={disabled} error={viewerError} offered={allowed.data?.viewers} />
          <Switch mt="md" label={t('domain_edit.fullscreen')} checked={fullscreen} onChange={(e) => setFullscreen(e.currentTarget.checked)} disabled={disabled} data-testid="edit-fullscreen" />
        </Section>

        <Section icon={<IconKey size={20} />} title={t('domain_edit.credentials')} hint={t('domain_edit.credentials_hint')} testId="edit-credentials">
          <Alert color="yellow" variant="light" icon={<IconAlertTriangle size={18} />} mb="md" data-testid="plain-text-warning">
            {t('domain_edit.plain_text_warning')}
          </Alert>
          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
            <TextInput label={t('domain_edit.username')} autoComplete="off" disabled={disabled} data-testid="edit-username" {...form.getInputProps('username')} />
            <PasswordInput label={t('domain_edit.password')} autoComplete="new-password" disabled={disabled} data-testid="edit-password" {...form.getInputProps('password')} />
          </SimpleGrid>
        </Section>

        <Section icon={<IconCpu size={20} />} title={t('domain_edit.hardware')} hint={t('domain_edit.hardware_hint')} testId="edit-hardware">
          {allowed.data ? (
            <Stack gap="lg">
              <HardwareSteps value={hw} onChange={setHw} quota={allowed.data.quota} showDisk={false} disabled={disabled} />
              <Group gap="xs">
                <Text size="sm" fw={500}>
                  {t('domain_edit.disk_size')}
                </Text>
                <Badge variant="light" color="gray" radius="sm" data-testid="edit-disk-size">
                  {diskLabel(t, info.hardware.disk_size)}
                </Badge>
                <Text size="xs" c="dimmed" data-testid="edit-disk-size-hint">
                  {t(me.data?.role === 'user' ? 'domain_edit.disk_size_hint_ask' : 'domain_edit.disk_size_hint')}
                </Text>
              </Group>
              <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="md">
                <Select
                  label={t('domain_edit.disk_bus')}
                  data={allowed.data.disk_bus.map((x) => ({ value: x.id, label: busLabel(x) }))}
                  value={diskBus}
                  onChange={(v) => v && setDiskBus(v)}
                  allowDeselect={false}
                  disabled={disabled}
                  data-testid="edit-disk-bus"
                />
                <Select
                  label={t('domain_edit.boot')}
                  data={allowed.data.boot_order.map((x) => ({ value: x.id, label: bootLabel(x) }))}
                  value={boot}
                  onChange={(v) => v && setBoot(v)}
                  allowDeselect={false}
                  disabled={disabled}
                  data-testid="edit-boot"
                />
                <Select
                  label={t('domain_edit.install')}
                  placeholder={t('domain_edit.install_none')}
                  data={(installs.data ?? []).map((x) => ({ value: x.id, label: x.name }))}
                  value={install}
                  onChange={(v) => {
                    setInstall(v);
                    const bus = installs.data?.find((x) => x.id === v)?.disk_bus;
                    if (bus) setDiskBus(bus);
                  }}
                  clearable
                  disabled={disabled}
                  data-testid="edit-install"
                />
              </SimpleGrid>
              <div>
                <Text size="sm" fw={500} mb={6}>
                  {t('domain_edit.networks')}
                </Text>
                <Group gap="lg">
                  {allowed.data.interfaces.map((net) => (
                    <Checkbox
                      key={net.id}
                      label={netLabel(net)}
                      description={t(`domain_edit.choices.interfaces_hint.${net.id}`, { defaultValue: net.description })}
                      checked={guest.interfaces.includes(net.id)}
                      onChange={(e) => toggleNet(net.id, e.currentTarget.checked)}
                      disabled={disabled}
                      data-testid={`edit-net-${net.id}`}
                    />
                  ))}
                </Group>
              </div>
              <GpuVideoFields
                allowed={allowed.data}
                value={{ gpu, video }}
                onChange={(v) => {
                  setGpu(v.gpu);
                  setVideo(v.video);
                }}
                viewers={guest.viewers}
                disabled={disabled}
                testId="edit"
              />
            </Stack>
          ) : (
            <Skeleton h={240} />
          )}
        </Section>

        {info.kind === 'desktop' && (
          <Card withBorder padding="lg" radius="lg" style={{ borderColor: 'var(--mantine-color-red-3)' }}>
            <Group justify="space-between" wrap="wrap" gap="sm">
              <div>
                <Text fw={600}>{t('domain_edit.recreate_title')}</Text>
                <Text size="sm" c="dimmed">
                  {t('domain_edit.recreate_hint')}
                </Text>
              </div>
              <Button color="red" variant="light" leftSection={<IconRefreshAlert size={16} />} onClick={recreate.confirm} disabled={disabled} loading={recreate.pending} data-testid="edit-recreate">
                {t('domain_edit.recreate')}
              </Button>
            </Group>
          </Card>
        )}
        {info.kind === 'template' && <PreferredHypervisorsCard kind="template" id={info.id} />}
      </Stack>

      <Group className={classes.actionBar} justify="space-between" gap="sm">
        <Text size="sm" c="dimmed">
          {info.kind === 'desktop' ? t('domain_edit.apply_hint') : ''}
        </Text>
        <Group gap="sm">
          <Button variant="default" onClick={() => void navigate(back)} data-testid="edit-cancel">
            {t('common.cancel')}
          </Button>
          <Button type="submit" leftSection={<IconDeviceFloppy size={16} />} disabled={disabled} loading={save.isPending} data-testid="edit-save">
            {t('common.save')}
          </Button>
        </Group>
      </Group>
    </form>
  );
}

/** /domain/edit?id=…: a stopped desktop's (or template's) hardware, viewers, credentials and cover. */
export default function DomainEditPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const from = backFrom(useLocation().state);
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const info = useQuery({ ...domainInfoQuery(id), enabled: Boolean(id) });
  if (!id || info.isError)
    return (
      <EmptyState
        icon={<IconAlertTriangle size={30} />}
        title={t('domain_edit.not_found_title')}
        body={t('domain_edit.not_found_body')}
        action={
          <Button variant="default" onClick={() => void navigate(from ?? '/desktops')}>
            {t('domain_edit.back')}
          </Button>
        }
      />
    );
  if (!info.data)
    return (
      <Stack gap="lg">
        <Skeleton h={48} w="40%" />
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
          <Skeleton h={260} radius="lg" />
          <Skeleton h={260} radius="lg" />
        </SimpleGrid>
        <Skeleton h={200} radius="lg" />
      </Stack>
    );
  // Keyed: a new id starts a fresh form.
  return <EditForm key={info.data.id} info={info.data} />;
}
