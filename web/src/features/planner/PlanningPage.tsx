import { useEffect, useMemo, useState } from 'react';
import { Badge, Button, Card, Group, Loader, Select, Skeleton, Stack, Text, useComputedColorScheme } from '@mantine/core';
import { readableText } from '../../lib/theme';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconCpu, IconPlus } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { validatePlan, type TPlan } from '@vdi/contracts';
import { notifySuccess } from '../../lib/error-handler';
import { EmptyState } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { Calendar } from '../../entities/booking/Calendar';
import { toDate } from '../../entities/booking/dates';
import { useBookingsLive } from '../../entities/booking/live';
import { ruleMessage } from '../../entities/booking/logic';
import { createPlan, deletePlan, PLANNER_KEY, plansQuery, reservableItemsQuery, updatePlan } from '../../entities/booking/planner-api';
import { PlanModal, type PlanDraft } from './PlanModal';
import '../../i18n/areas/bookings';
import { builtInText } from '../../lib/built-in-text';

/** One colour per profile, so that the plans of a card read at a glance. */
const PROFILE_COLORS = ['#4c6ef5', '#12b886', '#f76707', '#be4bdb', '#1098ad', '#e64980'];
const HOUR_MS = 3600_000;

/** /planning (admin): which profile each GPU offers, and when. */
export default function PlanningPage() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const items = useQuery(reservableItemsQuery);
  const [itemId, setItemId] = useState<string | null>(null);
  const [range, setRange] = useState<{ start: Date; end: Date } | null>(null);
  const [draft, setDraft] = useState<PlanDraft | null>(null);
  useEffect(() => {
    if (!itemId && items.data?.length) setItemId(items.data[0]!.id);
  }, [items.data, itemId]);
  const item = items.data?.find((i) => i.id === itemId) ?? null;
  const plans = useQuery(plansQuery(itemId, range));
  useBookingsLive([PLANNER_KEY]);

  const scheme = useComputedColorScheme('light');
  const colorOf = useMemo(() => {
    const ids = item?.subitems.map((s) => s.id) ?? [];
    return (subitemId: string) => PROFILE_COLORS[Math.max(0, ids.indexOf(subitemId)) % PROFILE_COLORS.length]!;
  }, [item]);
  const events = useMemo(
    () =>
      (plans.data ?? []).map((p) => ({
        id: p.id,
        // The units of each profile are in the badges above; the event names the profile.
        title: p.subitem_name,
        start: toDate(p.start) ?? undefined,
        end: toDate(p.end) ?? undefined,
        color: colorOf(p.subitem_id),
        className: 'plan-event',
      })),
    [plans.data, colorOf],
  );

  const toRange = (p: PlanDraft) => ({ start: p.start, end: p.end });
  const validate = (d: PlanDraft) => {
    const others = (plans.data ?? []).flatMap((p) => {
      const start = toDate(p.start);
      const end = toDate(p.end);
      return start && end ? [{ id: p.id, start, end }] : [];
    });
    const err = validatePlan({ range: toRange(d), now: new Date(), plans: others, editingId: d.id, startUnchanged: d.startUnchanged });
    return err ? ruleMessage(t, err) : null;
  };
  const refresh = () => void qc.invalidateQueries({ queryKey: PLANNER_KEY });
  const save = async (d: PlanDraft) => {
    if (d.id) await updatePlan(d.id, d);
    else await createPlan(d);
    notifySuccess(t(d.id ? 'planner.notify.updated' : 'planner.notify.created'));
    refresh();
  };
  const remove = async (id: string) => {
    await deletePlan(id);
    notifySuccess(t('planner.notify.deleted'));
    refresh();
  };
  const openPlan = (id: string) => {
    const p: TPlan | undefined = plans.data?.find((x) => x.id === id);
    if (!p || !itemId) return;
    const start = toDate(p.start)!;
    setDraft({ id: p.id, itemId, subitemId: p.subitem_id, start, end: toDate(p.end)!, startUnchanged: start.getTime() < Date.now() });
  };
  const newPlan = (start?: Date, end?: Date) => {
    if (!itemId) return;
    const from = start ?? new Date(Math.ceil(Date.now() / HOUR_MS) * HOUR_MS);
    setDraft({ itemId, subitemId: item?.subitems[0]?.id ?? '', start: from, end: end ?? new Date(from.getTime() + 8 * HOUR_MS) });
  };

  let content;
  if (items.isLoading)
    content = (
      <Card withBorder radius="lg">
        <Skeleton h={420} />
      </Card>
    );
  else if (!items.data?.length)
    content = <EmptyState icon={<IconCpu size={30} />} title={t('planner.empty_title')} body={t('planner.empty_body')} />;
  else
    content = (
      <Stack gap="md">
        <Card withBorder radius="lg" padding="md">
          <Group justify="space-between" wrap="wrap" gap="sm" align="flex-end">
            <Select
              label={t('planner.item')}
              data={items.data.map((i) => ({ value: i.id, label: i.name }))}
              value={itemId}
              onChange={setItemId}
              allowDeselect={false}
              w={280}
              data-testid="planner-item"
            />
            <Group gap="xs" wrap="wrap" data-testid="planner-profiles">
              {item && (
                <Text size="sm" c="dimmed">
                  {[item.brand, item.model].filter(Boolean).join(' ')}
                </Text>
              )}
              {item?.subitems.map((s) => (
                <Badge key={s.id} variant="light" radius="sm" styles={{ root: { background: `${colorOf(s.id)}22`, color: readableText(colorOf(s.id), scheme) } }}>
                  {t('planner.profile_option', { name: s.name, count: s.units })}
                </Badge>
              ))}
            </Group>
          </Group>
          {item?.description && (
            <Text size="sm" c="dimmed" mt="xs">
              {builtInText(t, item.description)}
            </Text>
          )}
        </Card>
        <Card withBorder radius="lg" padding="md" pos="relative">
          {plans.isFetching && <Loader size="xs" pos="absolute" top={12} right={12} role="status" aria-label={t('common.loading')} />}
          <Calendar events={events} onRange={setRange} onSelect={newPlan} onEventClick={openPlan} testId="planner-calendar" />
          <Text size="xs" c="dimmed" mt="sm">
            {t('planner.hint')}
          </Text>
        </Card>
      </Stack>
    );

  return (
    <>
      <PageHeader
        title={t('planner.heading')}
        subtitle={t('planner.subheading')}
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={() => newPlan()} disabled={!itemId} data-testid="planner-new">
            {t('planner.new')}
          </Button>
        }
      />
      {content}
      <PlanModal draft={draft} item={item} onClose={() => setDraft(null)} validate={validate} onSave={save} onDelete={remove} />
    </>
  );
}
