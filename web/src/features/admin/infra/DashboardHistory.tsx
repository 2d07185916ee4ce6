import { LineChart } from '@mantine/charts';
import '@mantine/charts/styles.layer.css';
import { Group, Paper, SegmentedControl, SimpleGrid, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconChartLine } from '@tabler/icons-react';
import { ZDashboardHistory, type TDashboardHistory } from '@vdi/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../../lib/api';
import { HANDLES_ERROR } from '../../../lib/queries';
import { INFRA_KEY } from './api';
import { builtInText } from '../../../lib/built-in-text';
import '../../../i18n/areas/admin-infra';
import { dateTimeFormat, numberFormat } from '../../../i18n/intl';

/** How often the history is read again (the sampler writes a row a minute). */
const HISTORY_REFRESH_MS = 30_000;
const COLORS = ['blue.6', 'teal.6', 'orange.6', 'grape.6', 'red.6', 'cyan.6', 'lime.7', 'pink.6'];

const historyQuery = (range: 'hour' | 'day') => ({
  queryKey: [...INFRA_KEY, 'dashboard-history', range],
  queryFn: () => api.get('/admin/dashboard/history', ZDashboardHistory, { query: { range } }),
  refetchInterval: HISTORY_REFRESH_MS,
  meta: HANDLES_ERROR,
});

/** One value per hypervisor and moment, as the charts read them: a row per moment, a column per host. */
function byHost(history: TDashboardHistory, value: 'cpu_percent' | 'memory_percent', label: (at: string) => string) {
  const rows = new Map<string, Record<string, string | number>>();
  for (const h of history.hypervisors)
    for (const p of h.points) {
      const row = rows.get(p.at) ?? { at: label(p.at) };
      row[h.id] = p[value];
      rows.set(p.at, row);
    }
  return [...rows.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, r]) => r);
}

/** The dashboard's history: running desktops, starts a minute, the start queue and each hypervisor's CPU and memory, live. */
export default function DashboardHistory() {
  const { t, i18n } = useTranslation();
  const [range, setRange] = useState<'hour' | 'day'>('hour');
  const { data, isPending } = useQuery(historyQuery(range));
  const time = (at: string) => dateTimeFormat(i18n.language, { hour: '2-digit', minute: '2-digit' }).format(new Date(at));
  const pct = (v: number) => `${numberFormat(i18n.language, { maximumFractionDigits: 1 }).format(v)} %`;
  const admin = data?.points.some((p) => p.queued !== null) ?? false;
  const hostSeries = (data?.hypervisors ?? []).map((h, i) => ({ name: h.id, label: builtInText(t, h.name), color: COLORS[i % COLORS.length]! }));
  const chart = (id: string, title: string, body: React.ReactNode) => (
    <Stack gap={4} data-testid={`dash-history-${id}`}>
      <Text size="sm" fw={600}>
        {title}
      </Text>
      <div role="img" aria-label={title}>
        {body}
      </div>
    </Stack>
  );

  return (
    <Paper withBorder radius="md" p="md" data-testid="dash-history">
      <Group justify="space-between" mb="sm" wrap="wrap">
        <Group gap="xs">
          <IconChartLine size={18} />
          <Title order={2} size="h4">
            {t('admin_infra.dashboard.history')}
          </Title>
        </Group>
        <SegmentedControl
          size="xs"
          value={range}
          onChange={(v) => setRange(v as 'hour' | 'day')}
          data={[
            { value: 'hour', label: t('admin_infra.dashboard.last_hour') },
            { value: 'day', label: t('admin_infra.dashboard.last_day') },
          ]}
          data-testid="dash-history-range"
        />
      </Group>
      {isPending || !data ? (
        <Skeleton h={220} />
      ) : data.points.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="dash-history-empty">
          {t('admin_infra.dashboard.history_empty')}
        </Text>
      ) : (
        <SimpleGrid cols={{ base: 1, lg: admin && hostSeries.length > 0 ? 3 : 1 }}>
          {chart(
            'desktops',
            t('admin_infra.dashboard.history_desktops'),
            <LineChart
              h={220}
              data={data.points.map((p) => ({ at: time(p.at), running: p.running, starts: p.starts, ...(p.queued === null ? {} : { queued: p.queued }) }))}
              dataKey="at"
              withDots={false}
              withLegend
              series={[
                { name: 'running', label: t('admin_infra.dashboard.history_running'), color: 'blue.6' },
                { name: 'starts', label: t('admin_infra.dashboard.history_starts'), color: 'teal.6' },
                ...(admin ? [{ name: 'queued', label: t('admin_infra.dashboard.history_queued'), color: 'orange.6' }] : []),
              ]}
            />,
          )}
          {admin &&
            hostSeries.length > 0 &&
            chart('cpu', t('admin_infra.dashboard.history_cpu'), <LineChart h={220} data={byHost(data, 'cpu_percent', time)} dataKey="at" withDots={false} withLegend yAxisProps={{ domain: [0, 100] }} valueFormatter={pct} series={hostSeries} />)}
          {admin &&
            hostSeries.length > 0 &&
            chart('memory', t('admin_infra.dashboard.history_memory'), <LineChart h={220} data={byHost(data, 'memory_percent', time)} dataKey="at" withDots={false} withLegend yAxisProps={{ domain: [0, 100] }} valueFormatter={pct} series={hostSeries} />)}
        </SimpleGrid>
      )}
    </Paper>
  );
}
