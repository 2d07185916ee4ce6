import { useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { Badge, Button, Card, Group, Skeleton, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCopy } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { HttpError } from '../../lib/api';
import { domainInfoQuery } from '../../entities/domain/api';
import { duplicateTemplate, OWN_TEMPLATES_KEY } from './api';
import { TemplateForm, type TemplateFormValues } from './TemplateForm';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

/** /templates/duplicate?id=…: a template of one's own on the same disk as another (no copy is made). */
export default function DuplicateTemplatePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const info = useQuery({ ...domainInfoQuery(id), enabled: Boolean(id) });
  const [nameError, setNameError] = useState<string | null>(null);

  const duplicate = useMutation({
    mutationFn: (v: TemplateFormValues) => duplicateTemplate(id, v),
    onSuccess: (_a, v) => {
      notifySuccess(t('templates.duplicate.done', { name: v.name }));
      void qc.invalidateQueries({ queryKey: OWN_TEMPLATES_KEY });
      void navigate('/templates');
    },
    onError: (err) => {
      if (err instanceof HttpError && err.code === 'new_template_name_exists') setNameError(t('errors.new_template_name_exists'));
      handleError(err);
    },
  });

  if (!id || info.isError || (info.data && info.data.kind !== 'template'))
    return (
      <EmptyState
        icon={<IconAlertTriangle size={30} />}
        title={t('templates.duplicate.not_found_title')}
        body={t('templates.duplicate.not_found_body')}
        action={
          <Button variant="default" onClick={() => void navigate('/templates')}>
            {t('templates.back')}
          </Button>
        }
      />
    );
  const src = info.data;
  return (
    <>
      <PageHeader title={t('templates.duplicate.heading')} subtitle={t('templates.duplicate.subheading')} />
      {src ? (
        <TemplateForm
          initial={{ name: t('templates.duplicate.default_name', { name: src.name }).slice(0, 50), description: src.description }}
          onSubmit={(v) => {
            setNameError(null);
            duplicate.mutate(v);
          }}
          onCancel={() => void navigate('/templates')}
          submitLabel={t('templates.duplicate.submit')}
          submitIcon={<IconCopy size={16} />}
          busy={duplicate.isPending}
          nameError={nameError}
          aside={
            <Card withBorder padding={0} radius="lg" style={{ overflow: 'hidden' }} data-testid="duplicate-source">
              <img src={src.image.url} alt="" style={{ width: '100%', height: 180, objectFit: 'cover', display: 'block' }} />
              <Stack gap={6} p="lg">
                <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
                  {t('templates.duplicate.source')}
                </Text>
                <Text fw={650}>{builtInText(t, src.name)}</Text>
                <Group gap={6}>
                  <Badge variant="light" color="gray" radius="sm" style={{ textTransform: 'none' }}>
                    {t('new_desktop.by', { name: src.user_name })}
                  </Badge>
                </Group>
                <Text size="xs" c="dimmed" mt={4}>
                  {t('templates.duplicate.how')}
                </Text>
              </Stack>
            </Card>
          }
        />
      ) : (
        <Skeleton h={420} radius="lg" />
      )}
    </>
  );
}
