import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Button, Card, Grid, Group, List, Radio, SegmentedControl, Stack, Text, Textarea, TextInput, ThemeIcon, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQueryClient } from '@tanstack/react-query';
import { IconDisc, IconDeviceFloppy, IconInfoCircle, IconLink, IconLock, IconUsers } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { MEDIA_DESCRIPTION_MAX, MEDIA_NAME_MAX, MEDIA_NOT_SHARED, MEDIA_SHARED_WITH_CATEGORY, type TMediaKind } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { errorMessage } from '../../lib/errors';
import { rules } from '../../lib/validation';
import { createMedia, OWN_MEDIA_KEY } from './api';
import '../../i18n/areas/content';

type Sharing = 'private' | 'category';

/** /media/new: a name, a web address and a kind; the download starts at once and shows on /media. */
export default function NewMediaPage() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const r = rules(t);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    initialValues: { name: '', url: '', kind: 'iso' as TMediaKind, description: '', sharing: 'private' as Sharing },
    validate: {
      name: r.all(r.required, r.maxLength(MEDIA_NAME_MAX)),
      url: r.all(r.required, r.url),
      description: r.maxLength(MEDIA_DESCRIPTION_MAX),
    },
  });

  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    try {
      await createMedia({
        name: v.name.trim(),
        url: v.url.trim(),
        kind: v.kind,
        description: v.description.trim(),
        allowed: v.sharing === 'category' ? MEDIA_SHARED_WITH_CATEGORY : MEDIA_NOT_SHARED,
      });
      notifySuccess(t('media.notify.created', { name: v.name.trim() }));
      await qc.invalidateQueries({ queryKey: OWN_MEDIA_KEY });
      await navigate('/media');
    } catch (err) {
      // Address problems belong next to the address; everything else goes through the one handler.
      if (err instanceof HttpError && err.code.startsWith('media_url_')) form.setFieldError('url', errorMessage(t, err, (k) => i18n.exists(k)));
      else handleError(err);
    } finally {
      setBusy(false);
    }
  });

  return (
    <>
      <PageHeader title={t('media.new_heading')} subtitle={t('media.new_subheading')} />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 8 }}>
          <Card withBorder radius="lg" padding="xl">
            <form noValidate onSubmit={submit}>
              <Stack gap="md">
                <TextInput
                  label={t('media.form.name')}
                  placeholder={t('media.form.name_placeholder')}
                  withAsterisk
                  maxLength={MEDIA_NAME_MAX + 10}
                  {...form.getInputProps('name')}
                  data-testid="media-form-name"
                />
                <TextInput
                  label={t('media.form.url')}
                  description={t('media.form.url_hint')}
                  placeholder="https://"
                  withAsterisk
                  leftSection={<IconLink size={16} />}
                  type="url"
                  autoComplete="off"
                  spellCheck={false}
                  {...form.getInputProps('url')}
                  data-testid="media-form-url"
                />
                <Stack gap={6}>
                  <Text size="sm" fw={500}>
                    {t('media.form.kind')}
                  </Text>
                  <SegmentedControl
                    value={form.values.kind}
                    onChange={(v) => form.setFieldValue('kind', v as TMediaKind)}
                    data-testid="media-form-kind"
                    aria-label={t('media.form.kind')}
                    data={[
                      {
                        value: 'iso',
                        label: (
                          <Group gap={6} wrap="nowrap" justify="center">
                            <IconDisc size={16} />
                            <span>{t('media.kinds.iso')}</span>
                          </Group>
                        ),
                      },
                      {
                        value: 'floppy',
                        label: (
                          <Group gap={6} wrap="nowrap" justify="center">
                            <IconDeviceFloppy size={16} />
                            <span>{t('media.kinds.floppy')}</span>
                          </Group>
                        ),
                      },
                    ]}
                  />
                </Stack>
                <Textarea
                  label={t('media.form.description')}
                  autosize
                  minRows={2}
                  maxRows={5}
                  {...form.getInputProps('description')}
                  data-testid="media-form-description"
                />
                <Radio.Group label={t('media.form.sharing')} description={t('media.form.sharing_hint')} {...form.getInputProps('sharing')}>
                  <Stack gap="xs" mt="xs">
                    <Radio
                      value="private"
                      label={
                        <Group gap={6} wrap="nowrap">
                          <IconLock size={14} />
                          {t('media.form.sharing_private')}
                        </Group>
                      }
                      data-testid="media-form-private"
                    />
                    <Radio
                      value="category"
                      label={
                        <Group gap={6} wrap="nowrap">
                          <IconUsers size={14} />
                          {t('media.form.sharing_category')}
                        </Group>
                      }
                      data-testid="media-form-share"
                    />
                  </Stack>
                </Radio.Group>
                <Group justify="flex-end" mt="md">
                  <Button component={Link} to="/media" variant="default">
                    {t('common.cancel')}
                  </Button>
                  <Button type="submit" loading={busy} leftSection={<IconDisc size={16} />} data-testid="media-form-submit">
                    {t('media.form.submit')}
                  </Button>
                </Group>
              </Stack>
            </form>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Card withBorder radius="lg" padding="lg" bg="var(--mantine-color-default-hover)">
            <Group gap="sm" mb="sm" wrap="nowrap">
              <ThemeIcon variant="light" radius="xl">
                <IconInfoCircle size={18} />
              </ThemeIcon>
              <Title order={2} size="h5">
                {t('media.help.title')}
              </Title>
            </Group>
            <List size="sm" spacing="xs" c="dimmed">
              <List.Item>{t('media.help.https')}</List.Item>
              <List.Item>{t('media.help.format')}</List.Item>
              <List.Item>{t('media.help.progress')}</List.Item>
              <List.Item>{t('media.help.quota')}</List.Item>
            </List>
          </Card>
        </Grid.Col>
      </Grid>
    </>
  );
}
