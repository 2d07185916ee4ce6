import { useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { Button, Card, Grid, Group, NumberInput, Select, SimpleGrid, Skeleton, Stack, Text, Textarea, TextInput, ThemeIcon, Title, defaultOptionsFilter, type OptionsFilter } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconCpu, IconDeviceDesktopPlus, IconDeviceSdCard, IconDisc, IconServer2 } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { FALLBACK_HARDWARE_QUOTA, MEDIA_DESKTOP_DEFAULTS, MEDIA_DESKTOP_NAME_MAX, MEDIA_DESKTOP_NAME_MIN, type TMedia } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { rules } from '../../lib/validation';
import { DESKTOPS_KEY } from '../../entities/desktop/api';
import { appliedQuotaQuery, createDesktopFromMedia, ownMediaQuery, sharedMediaQuery } from './api';
import { bootable, clampStep, SEARCH_MIN } from './logic';
import { formatGb } from '../../entities/format';
import '../../i18n/areas/content';

/** The media picker's search starts at two typed letters (spec 000 §5). */
const searchFrom2: OptionsFilter = (input) => (input.search.trim().length < SEARCH_MIN ? input.options : (defaultOptionsFilter(input) as ReturnType<OptionsFilter>));

/** /media/desktop/new: a new desktop that boots a downloaded ISO onto an empty disk. */
export default function NewDesktopFromMediaPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [params] = useSearchParams();
  const r = rules(t);
  const own = useQuery(ownMediaQuery);
  const shared = useQuery(sharedMediaQuery);
  const applied = useQuery(appliedQuotaQuery);
  const [busy, setBusy] = useState(false);

  const choices: TMedia[] = useMemo(() => bootable([...(own.data ?? []), ...(shared.data ?? [])]), [own.data, shared.data]);
  const quota = applied.data?.quota || FALLBACK_HARDWARE_QUOTA;
  const caps = {
    disk: Math.max(1, Math.floor(quota.desktops_disk_size)),
    vcpus: Math.max(1, Math.floor(quota.vcpus)),
    memory: Math.max(0.5, Math.floor(quota.memory * 2) / 2),
  };

  const form = useForm({
    initialValues: {
      media: params.get('media') ?? '',
      name: '',
      description: '',
      disk_size: MEDIA_DESKTOP_DEFAULTS.disk_size as number | string,
      vcpus: MEDIA_DESKTOP_DEFAULTS.vcpus as number | string,
      memory: MEDIA_DESKTOP_DEFAULTS.memory as number | string,
    },
    validate: {
      media: (v) => (v ? null : t('forms.required')),
      name: r.all(r.required, r.minLength(MEDIA_DESKTOP_NAME_MIN), r.maxLength(MEDIA_DESKTOP_NAME_MAX), r.inputFormat),
      description: r.maxLength(255),
      disk_size: (v) => (typeof v === 'number' && v >= 1 && v <= caps.disk ? null : t('media.desktop.range', { min: 1, max: caps.disk })),
      vcpus: (v) => (typeof v === 'number' && v >= 1 && v <= caps.vcpus ? null : t('media.desktop.range', { min: 1, max: caps.vcpus })),
      memory: (v) => (typeof v === 'number' && v >= 0.5 && v <= caps.memory && (v * 2) % 1 === 0 ? null : t('media.desktop.memory_range', { max: caps.memory })),
    },
  });

  // A media that is not (or no longer) bootable is not preselected.
  useEffect(() => {
    if (own.isSuccess && shared.isSuccess && form.values.media && !choices.some((m) => m.id === form.values.media)) form.setFieldValue('media', '');
    // eslint-disable-next-line react-hooks/exhaustive-deps -- checks the choice when the lists arrive or change, not on every keystroke of the form
  }, [own.isSuccess, shared.isSuccess, choices]);
  // Defaults never above the quota.
  useEffect(() => {
    if (!applied.isSuccess) return;
    form.setValues((v) => ({
      disk_size: typeof v.disk_size === 'number' ? Math.min(v.disk_size, caps.disk) : v.disk_size,
      vcpus: typeof v.vcpus === 'number' ? Math.min(v.vcpus, caps.vcpus) : v.vcpus,
      memory: typeof v.memory === 'number' ? Math.min(v.memory, caps.memory) : v.memory,
    }));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- clamps the defaults when the quota arrives or changes, not on every keystroke of the form
  }, [applied.isSuccess, caps.disk, caps.vcpus, caps.memory]);

  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    try {
      await createDesktopFromMedia({
        name: v.name.trim(),
        description: v.description.trim(),
        media_id: v.media,
        kind: 'iso',
        disk_size: Number(v.disk_size),
        hardware: { vcpus: Number(v.vcpus), memory: clampStep(Number(v.memory), 0.5, 0.5, caps.memory) },
      });
      notifySuccess(t('media.desktop.created', { name: v.name.trim() }));
      await qc.invalidateQueries({ queryKey: DESKTOPS_KEY, exact: true });
      await navigate('/desktops');
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  });

  const loading = own.isLoading || shared.isLoading || applied.isLoading;
  const selected = choices.find((m) => m.id === form.values.media);
  const byId = new Map(choices.map((m) => [m.id, m]));

  if (!loading && choices.length === 0) {
    return (
      <>
        <PageHeader title={t('media.desktop.heading')} subtitle={t('media.desktop.subheading')} />
        <EmptyState
          icon={<IconDisc size={30} />}
          title={t('media.desktop.none_title')}
          body={t('media.desktop.none_body')}
          action={
            <Group>
              <Button component={Link} to="/media" variant="default">
                {t('media.desktop.see_media')}
              </Button>
              <Button component={Link} to="/media/new">
                {t('media.new')}
              </Button>
            </Group>
          }
        />
      </>
    );
  }

  return (
    <>
      <PageHeader title={t('media.desktop.heading')} subtitle={t('media.desktop.subheading')} />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 8 }}>
          <Card withBorder radius="lg" padding="xl">
            {loading ? (
              <Stack gap="md" data-testid="media-desktop-loading">
                <Skeleton h={56} />
                <Skeleton h={56} />
                <Skeleton h={90} />
              </Stack>
            ) : (
              <form noValidate onSubmit={submit}>
                <Stack gap="md">
                  <Select
                    label={t('media.desktop.media')}
                    description={t('media.desktop.media_hint', { min: SEARCH_MIN })}
                    placeholder={t('media.desktop.media_placeholder')}
                    withAsterisk
                    searchable
                    filter={searchFrom2}
                    nothingFoundMessage={t('media.desktop.media_nothing')}
                    leftSection={<IconDisc size={16} />}
                    data={choices.map((m) => ({ value: m.id, label: m.name }))}
                    renderOption={({ option }) => {
                      const m = byId.get(option.value);
                      return (
                        <Stack gap={0}>
                          <Text size="sm">{option.label}</Text>
                          {m && (
                            <Text size="xs" c="dimmed">
                              {t('media.size_gb', { size: formatGb(m.size, i18n.language) })}
                              {m.user_name ? ` · ${m.user_name}` : ''}
                            </Text>
                          )}
                        </Stack>
                      );
                    }}
                    {...form.getInputProps('media')}
                    data-testid="media-desktop-media"
                  />
                  <TextInput label={t('media.desktop.name')} withAsterisk {...form.getInputProps('name')} data-testid="media-desktop-name" />
                  <Textarea label={t('media.desktop.description')} autosize minRows={2} maxRows={4} {...form.getInputProps('description')} data-testid="media-desktop-description" />
                  <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="md">
                    <NumberInput
                      label={t('media.desktop.disk_size')}
                      description={t('media.desktop.disk_up_to', { max: caps.disk })}
                      leftSection={<IconServer2 size={16} />}
                      suffix={` ${t('media.gb')}`}
                      min={1}
                      max={caps.disk}
                      step={1}
                      allowDecimal={false}
                      clampBehavior="strict"
                      {...form.getInputProps('disk_size')}
                      data-testid="media-desktop-disk"
                    />
                    <NumberInput
                      label={t('media.desktop.vcpus')}
                      description={t('media.desktop.up_to', { max: caps.vcpus })}
                      leftSection={<IconCpu size={16} />}
                      min={1}
                      max={caps.vcpus}
                      step={1}
                      allowDecimal={false}
                      clampBehavior="strict"
                      {...form.getInputProps('vcpus')}
                      data-testid="media-desktop-vcpus"
                    />
                    <NumberInput
                      label={t('media.desktop.memory')}
                      description={t('media.desktop.up_to_gb', { max: caps.memory })}
                      leftSection={<IconDeviceSdCard size={16} />}
                      suffix={` ${t('media.gb')}`}
                      min={0.5}
                      max={caps.memory}
                      step={0.5}
                      decimalScale={1}
                      clampBehavior="strict"
                      {...form.getInputProps('memory')}
                      data-testid="media-desktop-memory"
                    />
                  </SimpleGrid>
                  <Group justify="flex-end" mt="md">
                    <Button component={Link} to="/media" variant="default">
                      {t('common.cancel')}
                    </Button>
                    <Button type="submit" loading={busy} leftSection={<IconDeviceDesktopPlus size={16} />} data-testid="media-desktop-submit">
                      {t('media.desktop.submit')}
                    </Button>
                  </Group>
                </Stack>
              </form>
            )}
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Card withBorder radius="lg" padding="lg" bg="var(--mantine-color-default-hover)">
            <Group gap="sm" mb="sm" wrap="nowrap">
              <ThemeIcon variant="light" radius="xl">
                <IconDeviceDesktopPlus size={18} />
              </ThemeIcon>
              <Title order={2} size="h5">
                {t('media.desktop.help_title')}
              </Title>
            </Group>
            <Text size="sm" c="dimmed">
              {t('media.desktop.help')}
            </Text>
            {selected && (
              <Card withBorder radius="md" mt="md" padding="sm" data-testid="media-desktop-selected">
                <Group gap="sm" wrap="nowrap">
                  <ThemeIcon variant="light" color="teal" radius="md">
                    <IconDisc size={18} />
                  </ThemeIcon>
                  <div style={{ minWidth: 0 }}>
                    <Text size="sm" fw={600} truncate="end">
                      {selected.name}
                    </Text>
                    <Text size="xs" c="dimmed">
                      {t('media.size_gb', { size: formatGb(selected.size, i18n.language) })} · {t(`media.kinds.${selected.kind}`)}
                    </Text>
                  </div>
                </Group>
              </Card>
            )}
          </Card>
        </Grid.Col>
      </Grid>
    </>
  );
}
