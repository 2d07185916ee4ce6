import { useState } from 'react';
import { Button, Group, Modal, Radio, ScrollArea, Skeleton, Stack, Text, ThemeIcon } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconHourglassHigh, IconTemplate } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { HttpError, RequestTimeout } from '../../lib/api';
import { allowedTemplatesQuery, createTemporary, DESKTOPS_KEY } from '../../entities/desktop/api';
import { heldBy, openQuotaHeldDialog } from '../../entities/desktop/QuotaHeldDialog';
import classes from './DesktopsPage.module.css';
import { builtInText } from '../../lib/built-in-text';

/** Starts a temporary (non-persistent) desktop from a template the user may use. */
export function NewTemporaryModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const { data: templates, isLoading, isError, refetch } = useQuery({ ...allowedTemplatesQuery, enabled: opened });
  const [choice, setChoice] = useState<string | null>(null);
  const selected = choice ?? (templates?.length === 1 ? templates[0]!.id : null);
  const create = useMutation({
    mutationFn: (id: string) => createTemporary(id),
    onSuccess: () => {
      const name = builtInText(t, templates?.find((x) => x.id === selected)?.name ?? '');
      notifySuccess(t('desktops.temporary_modal.created', { name }));
      void qc.invalidateQueries({ queryKey: DESKTOPS_KEY, exact: true });
      setChoice(null);
      onClose();
    },
    onError: (err) => {
      // Over the person's own running quota: the one dialog that names the desktops holding it, each with its stop.
      const held = heldBy(err);
      if (held) {
        setChoice(null);
        onClose();
        return openQuotaHeldDialog(err as HttpError, held);
      }
      handleError(err);
      // No answer in 25 s: the desktop may still come; the list shows it when it does.
      if (err instanceof RequestTimeout) {
        void qc.invalidateQueries({ queryKey: DESKTOPS_KEY, exact: true });
        setChoice(null);
        onClose();
      }
    },
  });

  return (
    <Modal opened={opened} onClose={onClose} title={t('desktops.temporary_modal.title')} centered size="lg">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('desktops.temporary_modal.explain')}
        </Text>
        {isLoading ? (
          <Stack gap="xs">
            <Skeleton h={56} />
            <Skeleton h={56} />
          </Stack>
        ) : isError ? (
          <Group>
            <Text size="sm" c="red">
              {t('errors.generic_error')}
            </Text>
            <Button size="xs" variant="default" onClick={() => void refetch()}>
              {t('common.retry')}
            </Button>
          </Group>
        ) : !templates?.length ? (
          <Stack align="center" gap="xs" py="lg" data-testid="temporary-no-templates">
            <ThemeIcon size={44} radius="xl" variant="light" color="gray">
              <IconTemplate size={24} />
            </ThemeIcon>
            <Text size="sm" c="dimmed">
              {t('desktops.temporary_modal.none')}
            </Text>
          </Stack>
        ) : (
          <ScrollArea.Autosize mah={360} type="auto" offsetScrollbars>
            <Radio.Group value={selected} onChange={setChoice} aria-label={t('desktops.temporary_modal.template')}>
              <Stack gap="xs">
                {templates.map((tpl) => (
                  <Radio.Card key={tpl.id} value={tpl.id} radius="md" p="sm" className={classes.templateCard} data-testid="temporary-template" data-template-id={tpl.id}>
                    <Group wrap="nowrap" gap="sm" align="flex-start">
                      <Radio.Indicator mt={2} />
                      <div style={{ minWidth: 0 }}>
                        <Text fw={600} size="sm">
                          {builtInText(t, tpl.name)}
                        </Text>
                        <Text size="xs" c="dimmed" lineClamp={2}>
                          {builtInText(t, tpl.description) || t('desktops.no_description')}
                        </Text>
                      </div>
                    </Group>
                  </Radio.Card>
                ))}
              </Stack>
            </Radio.Group>
          </ScrollArea.Autosize>
        )}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button
            leftSection={<IconHourglassHigh size={16} />}
            disabled={!selected}
            loading={create.isPending}
            onClick={() => selected && create.mutate(selected)}
            data-testid="temporary-create"
          >
            {t('desktops.temporary_modal.start')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
