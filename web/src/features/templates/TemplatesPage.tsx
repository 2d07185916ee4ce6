import { useMemo, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import {
  ActionIcon,
  Badge,
  Button,
  Card,
  CloseButton,
  Group,
  Menu,
  Progress,
  SimpleGrid,
  Skeleton,
  Stack,
  Switch,
  Tabs,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { ListTabs } from '../../components/ListTabs';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  IconCopy,
  IconDeviceDesktopPlus,
  IconDots,
  IconEdit,
  IconLock,
  IconPlus,
  IconSearch,
  IconShare,
  IconTemplate,
  IconTransform,
  IconTrash,
  IconUsers,
  IconWorld,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAllowedTemplate, TTemplate } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { EmptyState, LoadError } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { OWN_TEMPLATES_KEY, ownTemplatesQuery, sharedTemplatesQuery, updateTemplate } from './api';
import { useTemplatesLive } from './live';
import { ChooseDesktopModal, DeleteTemplateModal, ShareModal, ToDesktopModal } from './modals';
import { sharingSummary } from '../../entities/sharing/SharingPicker';
import { formatGb, GB } from '../../entities/format';
import classes from './Templates.module.css';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

/** Sizes in GB, rounded (spec 001 §9), in the reader's language; small ones in MB so a fresh template does not read "0 GB". */
export function sizeLabel(bytes: number, lang = 'en') {
  const gb = bytes / 1024 ** 3;
  const n = (v: number, digits: number) => new Intl.NumberFormat(lang, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(v);
  if (gb >= 10) return `${n(Math.round(gb), 0)} GB`;
  if (gb >= 0.1) return `${n(gb, 1)} GB`;
  return `${n(Math.max(1, Math.round(bytes / 1024 ** 2)), 0)} MB`;
}

function GridSkeleton() {
  return (
    <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg">
      {[0, 1, 2].map((i) => (
        <Card key={i} withBorder radius="lg" padding={0}>
          <Skeleton h={0} style={{ aspectRatio: '16 / 7', height: 'auto' }} radius={0} />
          <Stack p="md" gap="sm">
            <Skeleton h={18} w="60%" />
            <Skeleton h={12} w="90%" />
            <Skeleton h={12} w="40%" />
          </Stack>
        </Card>
      ))}
    </SimpleGrid>
  );
}

type Open = (kind: 'share' | 'delete' | 'to_desktop', t: TTemplate) => void;

function OwnCard({ tpl, onOpen }: { tpl: TTemplate; onOpen: Open }) {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const creating = tpl.status === 'Creating';
  const share = sharingSummary(t, tpl.allowed);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => updateTemplate({ id: tpl.id, enabled }),
    onSuccess: (updated) => {
      qc.setQueryData<TTemplate[]>(OWN_TEMPLATES_KEY, (l) => (l ?? []).map((x) => (x.id === updated.id ? updated : x)));
      notifySuccess(t(updated.enabled ? 'templates.notify.enabled' : 'templates.notify.disabled', { name: builtInText(t, updated.name) }));
    },
    onError: (err) => handleError(err),
  });
  return (
    <Card withBorder radius="lg" padding={0} className={classes.card} data-disabled={!tpl.enabled || undefined} data-testid="template-card" data-name={tpl.name} data-status={tpl.status}>
      <div className={classes.cover}>
        <img src={tpl.image.url} alt="" loading="lazy" />
        <div className={classes.coverBadges}>
          {creating ? (
            <Badge color="indigo" variant="filled" radius="sm" data-testid="template-status">
              {t('templates.status.creating')}
            </Badge>
          ) : (
            <Badge color={tpl.enabled ? 'teal' : 'gray'} variant="filled" radius="sm" data-testid="template-status">
              {t(tpl.enabled ? 'templates.status.enabled' : 'templates.status.disabled')}
            </Badge>
          )}
          {tpl.duplicate_of && (
            <Badge color="grape" variant="filled" radius="sm" leftSection={<IconCopy size={11} />}>
              {t('templates.card.duplicate')}
            </Badge>
          )}
        </div>
        {creating && (
          <div className={classes.progressOverlay}>
            <Progress value={tpl.progress ?? 0} color="white" size="sm" radius="xl" animated striped aria-label={t('templates.new.progress')} />
          </div>
        )}
      </div>
      <Stack gap={8} p="md" className={classes.body}>
        <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
          <Text fw={650} lineClamp={1} title={builtInText(t, tpl.name)} data-testid="template-name-label">
            {builtInText(t, tpl.name)}
          </Text>
          <Menu position="bottom-end" shadow="md" width={230} withinPortal>
            <Menu.Target>
              <ActionIcon variant="subtle" color="gray" size="lg" aria-label={t('templates.more_actions', { name: builtInText(t, tpl.name) })} disabled={creating} data-testid="template-menu">
                <IconDots size={18} />
              </ActionIcon>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item leftSection={<IconDeviceDesktopPlus size={16} />} onClick={() => void navigate(`/desktops/new?template=${tpl.id}`)} disabled={!tpl.enabled} data-testid="template-new-desktop">
                {t('templates.actions.new_desktop')}
              </Menu.Item>
              <Menu.Item leftSection={<IconShare size={16} />} onClick={() => onOpen('share', tpl)} data-testid="template-share">
                {t('templates.actions.share')}
              </Menu.Item>
              <Menu.Item leftSection={<IconEdit size={16} />} onClick={() => void navigate(`/domain/edit?id=${tpl.id}`)} data-testid="template-edit">
                {t('templates.actions.edit')}
              </Menu.Item>
              <Menu.Item leftSection={<IconCopy size={16} />} onClick={() => void navigate(`/templates/duplicate?id=${tpl.id}`)} data-testid="template-duplicate">
                {t('templates.actions.duplicate')}
              </Menu.Item>
              <Menu.Item leftSection={<IconTransform size={16} />} onClick={() => onOpen('to_desktop', tpl)} data-testid="template-to-desktop">
                {t('templates.actions.to_desktop')}
              </Menu.Item>
              <Menu.Divider />
              <Menu.Item color="red" leftSection={<IconTrash size={16} />} onClick={() => onOpen('delete', tpl)} data-testid="template-delete">
                {t('templates.actions.delete')}
              </Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </Group>
        <Text size="sm" c="dimmed" lineClamp={2} mih={40} mt={-8}>
          {builtInText(t, tpl.description) || t('new_desktop.no_description')}
        </Text>
        <Group gap={6} wrap="nowrap" c={share.kind === 'private' ? 'dimmed' : share.kind === 'everyone' ? 'teal' : 'indigo'} data-testid="template-sharing">
          {share.kind === 'private' ? <IconLock size={14} /> : share.kind === 'everyone' ? <IconWorld size={14} /> : <IconUsers size={14} />}
          <Text size="xs" lineClamp={1}>
            {share.text}
          </Text>
        </Group>
        <Group gap={6}>
          <Badge variant="light" color="gray" radius="sm">
            {t('templates.card.vcpus', { count: tpl.vcpus })}
          </Badge>
          <Badge variant="light" color="gray" radius="sm">
            {t('templates.card.memory', { value: formatGb(tpl.memory * GB, i18n.language) })}
          </Badge>
          <Tooltip label={t('templates.card.size_hint')} withArrow>
            <Badge variant="light" color="gray" radius="sm">
              {sizeLabel(tpl.size, i18n.language)}
            </Badge>
          </Tooltip>
          {tpl.derivatives > 0 && (
            <Badge variant="light" color="indigo" radius="sm" data-testid="template-derivatives">
              {t('templates.card.derivatives', { count: tpl.derivatives })}
            </Badge>
          )}
        </Group>
      </Stack>
      <Group className={classes.footer} justify="space-between" gap="xs" p="md" pt="sm" wrap="nowrap">
        <Switch
          label={t('templates.card.enabled')}
          checked={tpl.enabled}
          disabled={creating || toggle.isPending}
          onChange={(e) => toggle.mutate(e.currentTarget.checked)}
          data-testid="template-enabled-toggle"
        />
        <Button size="xs" variant="light" leftSection={<IconShare size={14} />} onClick={() => onOpen('share', tpl)} disabled={creating} data-testid="template-share-button">
          {t('templates.actions.share')}
        </Button>
      </Group>
    </Card>
  );
}

function SharedCard({ tpl }: { tpl: TAllowedTemplate }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  return (
    <Card withBorder radius="lg" padding={0} className={classes.card} data-testid="shared-template-card" data-name={tpl.name}>
      <div className={classes.cover}>
        <img src={tpl.image.url} alt="" loading="lazy" />
      </div>
      <Stack gap={8} p="md" className={classes.body}>
        <Text fw={650} lineClamp={1}>
          {builtInText(t, tpl.name)}
        </Text>
        <Text size="sm" c="dimmed" lineClamp={2} mih={40} mt={-8}>
          {builtInText(t, tpl.description) || t('new_desktop.no_description')}
        </Text>
        <Group gap={6}>
          <Badge variant="light" color="gray" radius="sm" style={{ textTransform: 'none' }}>
            {t('new_desktop.by', { name: tpl.user_name })}
          </Badge>
          <Badge variant="light" color="gray" radius="sm" style={{ textTransform: 'none' }}>
            {builtInText(t, tpl.group_name)}
          </Badge>
        </Group>
      </Stack>
      <Group className={classes.footer} justify="flex-end" gap="xs" p="md" pt="sm">
        <Button size="xs" variant="default" leftSection={<IconCopy size={14} />} onClick={() => void navigate(`/templates/duplicate?id=${tpl.id}`)} data-testid="shared-duplicate">
          {t('templates.actions.duplicate')}
        </Button>
        <Button size="xs" leftSection={<IconDeviceDesktopPlus size={14} />} onClick={() => void navigate(`/desktops/new?template=${tpl.id}`)} data-testid="shared-new-desktop">
          {t('templates.actions.new_desktop')}
        </Button>
      </Group>
    </Card>
  );
}

/** /templates: own and shared tabs (spec 001 §2). */
export default function TemplatesPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const tab = params.get('tab') === 'shared' ? 'shared' : 'own';
  const own = useQuery(ownTemplatesQuery);
  const shared = useQuery({ ...sharedTemplatesQuery, enabled: tab === 'shared' || own.isSuccess });
  useTemplatesLive();
  const [search, setSearch] = useState('');
  const [term] = useDebouncedValue(search.trim().toLowerCase(), 150);
  const [dialog, setDialog] = useState<{ kind: 'share' | 'delete' | 'to_desktop'; id: string } | null>(null);
  const [choosing, setChoosing] = useState(false);
  const open: Open = (kind, tpl) => setDialog({ kind, id: tpl.id });
  const current = dialog ? (own.data?.find((x) => x.id === dialog.id) ?? null) : null;
  const match = (x: { name: string; description: string; user_name?: string | null }) => !term || `${x.name} ${x.description} ${builtInText(t, x.name)} ${builtInText(t, x.description)} ${x.user_name ?? ''}`.toLowerCase().includes(term);
  const ownShown = useMemo(() => (own.data ?? []).filter(match), [own.data, term]); // eslint-disable-line react-hooks/exhaustive-deps -- `match` reads only `term` and the translations, new every render
  const sharedShown = useMemo(() => (shared.data ?? []).filter(match), [shared.data, term]); // eslint-disable-line react-hooks/exhaustive-deps -- as above

  const retry = (q: { refetch: () => unknown; isRefetching: boolean }) => (
    <LoadError title={t('templates.load_error')} retrying={q.isRefetching} onRetry={() => void q.refetch()} />
  );

  let ownContent;
  if (own.isLoading) ownContent = <GridSkeleton />;
  else if (own.isError) ownContent = retry(own);
  else if (!own.data?.length)
    ownContent = (
      <EmptyState
        icon={<IconTemplate size={30} />}
        title={t('templates.empty_own_title')}
        body={t('templates.empty_own_body')}
        action={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setChoosing(true)}>
            {t('templates.new_template')}
          </Button>
        }
      />
    );
  else if (!ownShown.length) ownContent = <EmptyState icon={<IconSearch size={30} />} title={t('templates.no_match')} />;
  else
    ownContent = (
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="own-templates">
        {ownShown.map((tpl) => (
          <OwnCard key={tpl.id} tpl={tpl} onOpen={open} />
        ))}
      </SimpleGrid>
    );

  let sharedContent;
  if (shared.isLoading) sharedContent = <GridSkeleton />;
  else if (shared.isError) sharedContent = retry(shared);
  else if (!shared.data?.length) sharedContent = <EmptyState icon={<IconUsers size={30} />} title={t('templates.empty_shared_title')} body={t('templates.empty_shared_body')} />;
  else if (!sharedShown.length) sharedContent = <EmptyState icon={<IconSearch size={30} />} title={t('templates.no_match')} />;
  else
    sharedContent = (
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="shared-templates">
        {sharedShown.map((tpl) => (
          <SharedCard key={tpl.id} tpl={tpl} />
        ))}
      </SimpleGrid>
    );

  return (
    <>
      <PageHeader
        title={t('templates.heading')}
        subtitle={t('templates.subheading')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => setChoosing(true)} data-testid="templates-new">
            {t('templates.new_template')}
          </Button>
        }
      />
      <Tabs value={tab} onChange={(v) => setParams(v === 'shared' ? { tab: 'shared' } : {}, { replace: true })} keepMounted={false}>
        <Group justify="space-between" mb="lg" wrap="wrap" gap="sm">
          <ListTabs
            tabs={[
              { value: 'own', label: t('templates.tab_own'), icon: <IconTemplate size={16} />, count: own.data?.length, testId: 'tab-own' },
              { value: 'shared', label: t('templates.tab_shared'), icon: <IconUsers size={16} />, count: shared.data?.length, testId: 'tab-shared' },
            ]}
          />
          <TextInput
            placeholder={t('templates.search')}
            aria-label={t('templates.search')}
            leftSection={<IconSearch size={16} />}
            value={search}
            onChange={(e) => setSearch(e.currentTarget.value)}
            rightSection={search ? <CloseButton size="sm" onClick={() => setSearch('')} aria-label={t('new_desktop.clear_search')} /> : null}
            w={{ base: '100%', sm: 300 }}
            data-testid="templates-search"
          />
        </Group>
        <Tabs.Panel value="own">{ownContent}</Tabs.Panel>
        <Tabs.Panel value="shared">{sharedContent}</Tabs.Panel>
      </Tabs>
      <ShareModal template={dialog?.kind === 'share' ? current : null} onClose={() => setDialog(null)} />
      <ToDesktopModal template={dialog?.kind === 'to_desktop' ? current : null} onClose={() => setDialog(null)} />
      <DeleteTemplateModal template={dialog?.kind === 'delete' ? current : null} onClose={() => setDialog(null)} />
      <ChooseDesktopModal opened={choosing} onClose={() => setChoosing(false)} />
    </>
  );
}
