import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { Alert, Badge, Box, Button, Checkbox, Group, Modal, Radio, ScrollArea, Skeleton, Stack, Text, TextInput, ThemeIcon, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconCopy, IconDeviceDesktop, IconLock, IconTemplate, IconTrash, IconTransform } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { DOMAIN_NAME_MAX, DOMAIN_NAME_MIN, desktopState, type TDesktop, type TTemplate, type TTemplateAllowed, type TTemplateTreeNode } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { HttpError } from '../../lib/api';
import { rules } from '../../lib/validation';
import { desktopsQuery } from '../../entities/desktop/api';
import { deleteTemplate, OWN_TEMPLATES_KEY, templateToDesktop, treeQuery } from './api';
import { updateAllowed } from '../../entities/sharing/api';
import { SharingPicker } from '../../entities/sharing/SharingPicker';
import classes from './Templates.module.css';
import { builtInText } from '../../lib/built-in-text';
import { HANDLES_ERROR } from '../../lib/queries';
import '../../i18n/areas/content';

/** Sharing of one template. */
export function ShareModal({ template, onClose }: { template: TTemplate | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [allowed, setAllowed] = useState<TTemplateAllowed | null>(null);
  useEffect(() => setAllowed(template?.allowed ?? null), [template]);
  const save = useMutation({
    // The permission picker's own call (core §7); the list follows it (template_update, or the cache here).
    mutationFn: async () => {
      await updateAllowed('domains', template!.id, allowed!);
      return { ...template!, allowed: allowed! };
    },
    onSuccess: (updated) => {
      qc.setQueryData<TTemplate[]>(OWN_TEMPLATES_KEY, (l) => (l ?? []).map((x) => (x.id === updated.id ? { ...x, allowed: updated.allowed } : x)));
      notifySuccess(t('templates.share.saved', { name: builtInText(t, updated.name) }));
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={Boolean(template)} onClose={onClose} title={t('templates.share.title', { name: builtInText(t, template?.name ?? '') })} centered size="lg">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('templates.form.sharing_hint')}
        </Text>
        {allowed && <SharingPicker value={allowed} onChange={setAllowed} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button onClick={() => save.mutate()} loading={save.isPending} data-testid="share-save">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Template → desktop: a name and a confirmation checkbox (spec 001 §5). */
export function ToDesktopModal({ template, onClose }: { template: TTemplate | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const r = rules(t);
  const [name, setName] = useState('');
  const [sure, setSure] = useState(false);
  useEffect(() => {
    setName(template?.name ?? '');
    setSure(false);
  }, [template]);
  const blocked = template ? template.derivatives > 0 || template.duplicate_of !== null : false;
  const nameError = name ? r.all(r.minLength(DOMAIN_NAME_MIN), r.maxLength(DOMAIN_NAME_MAX), r.inputFormat)(name.trim()) : null;
  const convert = useMutation({
    mutationFn: () => templateToDesktop(template!.id, name.trim()),
    onSuccess: () => {
      qc.setQueryData<TTemplate[]>(OWN_TEMPLATES_KEY, (l) => (l ?? []).filter((x) => x.id !== template!.id));
      void qc.invalidateQueries({ queryKey: ['desktops'] });
      notifySuccess(t('templates.to_desktop.done', { name: name.trim() }));
      onClose();
      void navigate('/desktops');
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={Boolean(template)} onClose={onClose} title={t('templates.to_desktop.title')} centered>
      <Stack gap="md">
        {blocked ? (
          <Alert color="orange" icon={<IconAlertTriangle size={18} />} data-testid="to-desktop-blocked">
            {t(template?.duplicate_of ? 'errors.template_is_duplicated' : 'errors.template_has_derivatives')}
          </Alert>
        ) : (
          <Text size="sm">{t('templates.to_desktop.body', { name: builtInText(t, template?.name ?? '') })}</Text>
        )}
        <TextInput
          label={t('new_desktop.name')}
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={nameError}
          disabled={blocked}
          data-testid="to-desktop-name"
        />
        <Checkbox
          label={t('templates.to_desktop.confirm')}
          checked={sure}
          onChange={(e) => setSure(e.currentTarget.checked)}
          disabled={blocked}
          data-testid="to-desktop-confirm"
        />
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button
            leftSection={<IconTransform size={16} />}
            disabled={blocked || !sure || !name.trim() || Boolean(nameError)}
            loading={convert.isPending}
            onClick={() => convert.mutate()}
            data-testid="to-desktop-submit"
          >
            {t('templates.to_desktop.submit')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function TreeNode({ node, depth }: { node: TTemplateTreeNode; depth: number }) {
  const { t } = useTranslation();
  const template = node.kind === 'template';
  return (
    <Box className={depth > 0 ? classes.treeChild : undefined} data-testid="tree-node" data-kind={node.kind} data-name={node.name} data-pending={node.pending || undefined}>
      <Group gap="xs" wrap="nowrap" className={classes.treeRow} data-root={depth === 0 || undefined}>
        <ThemeIcon size={26} radius="md" variant="light" color={node.pending ? 'red' : template ? 'grape' : 'indigo'}>
          {template ? node.duplicate ? <IconCopy size={15} /> : <IconTemplate size={15} /> : <IconDeviceDesktop size={15} />}
        </ThemeIcon>
        <Text size="sm" fw={depth === 0 ? 700 : 500} lineClamp={1} style={{ flex: '1 1 auto', minWidth: 0 }}>
          {builtInText(t, node.name)}
        </Text>
        {node.duplicate && (
          <Badge size="xs" variant="light" color="grape" radius="sm">
            {t('templates.tree.duplicate')}
          </Badge>
        )}
        <Badge size="xs" variant="light" color="gray" radius="sm" style={{ textTransform: 'none', flex: '0 0 auto' }}>
          {node.user_name ?? node.user}
        </Badge>
        {node.pending && (
          <Tooltip label={t('templates.tree.pending_hint')} withArrow>
            <ThemeIcon size={20} radius="xl" color="red" variant="filled">
              <IconLock size={12} />
            </ThemeIcon>
          </Tooltip>
        )}
      </Group>
      {node.children.map((c) => (
        <TreeNode key={c.id} node={c} depth={depth + 1} />
      ))}
    </Box>
  );
}

/** Deleting a template: the tree of what goes with it; refused while others own some of it. */
export function DeleteTemplateModal({ template, onClose }: { template: TTemplate | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const tree = useQuery({ ...treeQuery(template?.id ?? ''), enabled: Boolean(template) });
  const remove = useMutation({
    mutationFn: () => deleteTemplate(template!.id),
    onSuccess: () => {
      qc.setQueryData<TTemplate[]>(OWN_TEMPLATES_KEY, (l) => (l ?? []).filter((x) => x.id !== template!.id));
      void qc.invalidateQueries({ queryKey: OWN_TEMPLATES_KEY });
      void qc.invalidateQueries({ queryKey: ['desktops'] });
      notifySuccess(t('templates.delete.done', { name: builtInText(t, template!.name) }));
      onClose();
    },
    onError: (err) => {
      if (err instanceof HttpError && err.status === 403) void tree.refetch();
      handleError(err);
    },
  });
  const data = tree.data;
  const pending = data?.pending ?? [];
  return (
    <Modal opened={Boolean(template)} onClose={onClose} title={t('templates.delete.title', { name: builtInText(t, template?.name ?? '') })} centered size="lg">
      <Stack gap="md" data-testid="delete-template-modal">
        {!data ? (
          <Stack gap="xs">
            <Skeleton h={28} />
            <Skeleton h={28} ml="lg" />
            <Skeleton h={28} ml="lg" />
          </Stack>
        ) : (
          <>
            <Text size="sm">
              {data.desktops + data.templates === 0
                ? t('templates.delete.alone')
                : t('templates.delete.with', {
                    list: [
                      data.desktops > 0 ? t('templates.delete.n_desktops', { count: data.desktops }) : null,
                      data.templates > 0 ? t('templates.delete.n_templates', { count: data.templates }) : null,
                    ]
                      .filter(Boolean)
                      .join(', '),
                  })}
            </Text>
            <ScrollArea.Autosize mah={320} type="auto" offsetScrollbars>
              <Box className={classes.tree} data-testid="template-tree">
                <TreeNode node={data.tree} depth={0} />
              </Box>
            </ScrollArea.Autosize>
            {pending.length > 0 ? (
              <Alert color="red" icon={<IconLock size={18} />} title={t('templates.delete.pending_title')} data-testid="delete-pending">
                {t('templates.delete.pending_body', { count: pending.length, names: pending.map((p) => `${builtInText(t, p.name)} (${p.user_name ?? '?'})`).join(', ') })}
              </Alert>
            ) : (
              <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} />}>
                {t('templates.delete.recycle_hint')}
              </Alert>
            )}
          </>
        )}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button color="red" leftSection={<IconTrash size={16} />} disabled={!data || pending.length > 0} loading={remove.isPending} onClick={() => remove.mutate()} data-testid="delete-template-confirm">
            {t('templates.delete.submit')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** "New template": pick one of your stopped desktops, then /templates/new?desktop=… */
export function ChooseDesktopModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const desktops = useQuery({ ...desktopsQuery, enabled: opened, meta: HANDLES_ERROR });
  const [choice, setChoice] = useState<string | null>(null);
  const usable = (d: TDesktop) => desktopState(d.state) === 'stopped' && !d.server && d.type === 'persistent';
  const list = (desktops.data ?? []).filter((d) => d.type === 'persistent');
  return (
    <Modal opened={opened} onClose={onClose} title={t('templates.choose.title')} centered size="lg">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('templates.choose.body')}
        </Text>
        {desktops.isLoading ? (
          <Skeleton h={120} />
        ) : list.length === 0 ? (
          <Text size="sm" c="dimmed" ta="center" py="lg">
            {t('templates.choose.none')}
          </Text>
        ) : (
          <ScrollArea.Autosize mah={340} type="auto" offsetScrollbars>
            <Radio.Group value={choice} onChange={setChoice}>
              <Stack gap="xs">
                {list.map((d) => (
                  <Radio.Card key={d.id} value={d.id} disabled={!usable(d)} radius="md" p="sm" className={classes.pick} data-testid="choose-desktop" data-name={d.name}>
                    <Group wrap="nowrap" gap="sm">
                      <Radio.Indicator disabled={!usable(d)} />
                      <div style={{ minWidth: 0, flex: 1 }}>
                        <Text size="sm" fw={600} lineClamp={1}>
                          {builtInText(t, d.name)}
                        </Text>
                        <Text size="xs" c="dimmed" lineClamp={1}>
                          {usable(d) ? builtInText(t, d.description) || t('new_desktop.no_description') : t(d.server ? 'templates.choose.server' : 'templates.choose.running')}
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
          <Button disabled={!choice} onClick={() => void navigate(`/templates/new?desktop=${encodeURIComponent(choice!)}`)} data-testid="choose-desktop-next">
            {t('common.continue')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
