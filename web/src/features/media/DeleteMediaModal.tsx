import { Alert, Badge, Button, Group, Modal, Paper, Skeleton, Stack, Table, Text, ThemeIcon } from '@mantine/core';
import { ScrollBox } from '../../components/ScrollBox';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCircleCheck, IconTrash } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { AT_REST, statusIn, type TMedia } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { StateBadge } from '../../entities/desktop/StateBadge';
import { deleteMedia, mediaDesktopsQuery, OWN_MEDIA_KEY, SHARED_MEDIA_KEY } from './api';
import { removeMedia } from './logic';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

/** Not at rest: running or under way (its disk is in use). */
const RUNNING = (status: string) => !statusIn(AT_REST, status);

/** Confirms a media deletion, listing the desktops that use it (they lose it; running ones block it). */
export function DeleteMediaModal({ media, onClose }: { media: TMedia | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const desktops = useQuery({ ...mediaDesktopsQuery(media?.id ?? ''), enabled: Boolean(media) });
  const remove = useMutation({
    mutationFn: (m: TMedia) => deleteMedia(m.id),
    onSuccess: (_r, m) => {
      for (const key of [OWN_MEDIA_KEY, SHARED_MEDIA_KEY]) qc.setQueryData<TMedia[]>(key, (l) => (l ? removeMedia(l, m.id) : l));
      notifySuccess(t('media.notify.deleted', { name: m.name }));
      onClose();
    },
    onError: (err) => handleError(err),
  });
  const list = desktops.data ?? [];
  const running = list.filter((d) => RUNNING(d.status));

  return (
    <Modal opened={Boolean(media)} onClose={onClose} title={t('media.delete.title', { name: media?.name ?? '' })} centered size="lg" data-testid="media-delete-modal">
      <Stack gap="md">
        <Text size="sm">{t('media.delete.explain')}</Text>
        {desktops.isLoading ? (
          <Stack gap="xs">
            <Skeleton h={28} />
            <Skeleton h={28} />
          </Stack>
        ) : desktops.isError ? (
          <Alert color="red" icon={<IconAlertTriangle size={18} />}>
            {t('errors.generic_error')}
          </Alert>
        ) : list.length === 0 ? (
          <Paper withBorder radius="md" p="md" data-testid="media-delete-no-desktops">
            <Group gap="sm" wrap="nowrap">
              <ThemeIcon variant="light" color="teal" radius="xl">
                <IconCircleCheck size={18} />
              </ThemeIcon>
              <Text size="sm">{t('media.delete.no_desktops')}</Text>
            </Group>
          </Paper>
        ) : (
          <>
            <Text size="sm" fw={600}>
              {t('media.delete.desktops', { count: list.length })}
            </Text>
            <Paper withBorder radius="md" style={{ overflow: 'hidden' }}>
              <ScrollBox mah={260} label={t('media.delete.desktops', { count: list.length })}>
                <Table verticalSpacing={6} horizontalSpacing="md" data-testid="media-delete-desktops">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('media.delete.columns.desktop')}</Table.Th>
                      <Table.Th>{t('media.delete.columns.owner')}</Table.Th>
                      <Table.Th>{t('media.delete.columns.state')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {list.map((d) => (
                      <Table.Tr key={d.id} data-testid="media-delete-desktop" data-name={d.name}>
                        <Table.Td>
                          <Group gap={6} wrap="nowrap">
                            <Text size="sm" fw={500}>
                              {builtInText(t, d.name)}
                            </Text>
                            {d.kind === 'template' && (
                              <Badge size="xs" variant="outline">
                                {t('media.delete.template')}
                              </Badge>
                            )}
                          </Group>
                        </Table.Td>
                        <Table.Td>
                          <Text size="sm" c="dimmed">
                            {d.user_name ?? d.user}
                          </Text>
                        </Table.Td>
                        <Table.Td>
                          <StateBadge status={d.status} size="sm" />
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollBox>
            </Paper>
            {running.length > 0 ? (
              <Alert color="red" icon={<IconAlertTriangle size={18} />} data-testid="media-delete-running">
                {t('media.delete.running', { count: running.length })}
              </Alert>
            ) : (
              <Text size="sm" c="dimmed">
                {t('media.delete.detach')}
              </Text>
            )}
          </>
        )}
        <Group justify="flex-end" gap="sm" mt="xs">
          <Button variant="default" onClick={onClose} data-testid="media-delete-cancel">
            {t('common.cancel')}
          </Button>
          <Button
            color="red"
            leftSection={<IconTrash size={16} />}
            loading={remove.isPending}
            disabled={desktops.isLoading || running.length > 0}
            onClick={() => media && remove.mutate(media)}
            data-testid="media-delete-confirm"
          >
            {t('media.delete.confirm')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
