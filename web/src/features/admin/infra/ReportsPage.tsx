import { AreaChart, BarChart } from '@mantine/charts';
import '@mantine/charts/styles.layer.css';
import { Alert, Button, Group, Paper, Select, SimpleGrid, Skeleton, Stack, Table, Tabs, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconChartBar, IconDownload, IconTable } from '@tabler/icons-react';
import { REPORT_GROUPINGS, type TReportGrouping, type TReportPart, type TUsageReport, type TUsageReportQuery } from '@vdi/contracts';
import dayjs from 'dayjs';
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../../components/PageHeader';
import { formatBytes } from '../../../entities/format';
import { errorMessage } from '../../../lib/errors';
import { useAction } from '../../../lib/use-action';
import { downloadReportCsv, usageReportQuery } from './reports-api';
import '../../../i18n/areas/admin-infra';
import { dateTimeFormat, numberFormat } from '../../../i18n/intl';

const PRESETS = ['7d', '30d', 'month', 'year', 'custom'] as const;
type Preset = (typeof PRESETS)[number];
const today = () => dayjs().format('YYYY-MM-DD');
function periodOf(preset: Preset): { from: string; to: string } | null {
  const to = today();
  if (preset === '7d') return { from: dayjs().subtract(6, 'day').format('YYYY-MM-DD'), to };
  if (preset === '30d') return { from: dayjs().subtract(29, 'day').format('YYYY-MM-DD'), to };
  if (preset === 'month') return { from: dayjs().startOf('month').format('YYYY-MM-DD'), to };
  if (preset === 'year') return { from: dayjs().startOf('year').format('YYYY-MM-DD'), to };
  return null;
}
/** How many groups the bar chart shows (the table lists all). */
const CHART_GROUPS = 10;

/** One part of the report: its chart, the same numbers as a table (a tab), and its CSV. */
function ReportCard({ id, title, part, query, empty, emptyText, chart, table, footer }: { id: string; title: string; part: TReportPart; query: TUsageReportQuery; empty: boolean; emptyText?: string; chart: ReactNode; table: ReactNode; footer?: ReactNode }) {
  const { t } = useTranslation();
  const exporting = useAction();
  return (
    <Paper withBorder radius="md" p="md" data-testid={`report-${id}`}>
      <Group justify="space-between" mb="sm" wrap="wrap" gap="xs">
        <Title order={2} size="h4">
          {title}
        </Title>
        <Button size="xs" variant="default" leftSection={<IconDownload size={14} />} loading={exporting.busy} onClick={() => exporting.run(() => downloadReportCsv(query, part))} data-testid={`report-${id}-csv`}>
          {t('admin_infra.reports.csv')}
        </Button>
      </Group>
      {exporting.error && (
        <Alert color="red" mb="sm">
          {exporting.error}
        </Alert>
      )}
      {empty ? (
        <Text c="dimmed" size="sm" py="xl" ta="center" data-testid={`report-${id}-empty`}>
          {emptyText ?? t('admin_infra.reports.empty')}
        </Text>
      ) : (
        <Tabs defaultValue="chart" keepMounted={false}>
          <Tabs.List mb="sm">
            <Tabs.Tab value="chart" leftSection={<IconChartBar size={14} />} data-testid={`report-${id}-chart-tab`}>
              {t('admin_infra.reports.chart')}
            </Tabs.Tab>
            <Tabs.Tab value="table" leftSection={<IconTable size={14} />} data-testid={`report-${id}-table-tab`}>
              {t('admin_infra.reports.table')}
            </Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="chart">
            <div role="img" aria-label={title} data-testid={`report-${id}-chart`}>
              {chart}
            </div>
          </Tabs.Panel>
          <Tabs.Panel value="table">
            <Table.ScrollContainer minWidth={320} maxHeight={320}>
              <Table striped highlightOnHover stickyHeader data-testid={`report-${id}-table`}>
                <Table.Caption>{title}</Table.Caption>
                {table}
              </Table>
            </Table.ScrollContainer>
          </Tabs.Panel>
        </Tabs>
      )}
      {footer}
    </Paper>
  );
}

function Total({ label, value, detail, testId }: { label: string; value: string; detail?: string; testId: string }) {
  return (
    <Paper withBorder radius="md" p="md" data-testid={testId}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text fz={26} fw={700} lh={1.2} data-testid={`${testId}-value`}>
        {value}
      </Text>
      {detail && (
        <Text size="sm" c="dimmed">
          {detail}
        </Text>
      )}
    </Paper>
  );
}

function Charts({ report, query }: { report: TUsageReport; query: TUsageReportQuery }) {
  const { t, i18n } = useTranslation();
  const format = (v: number) => numberFormat(i18n.language, { maximumFractionDigits: 2 }).format(v);
  // A few seconds of a desktop are not "0" hours.
  const n = (v: number) => (v > 0 && v < 0.01 ? `< ${format(0.01)}` : format(v));
  // The charts' axes and tooltips: three significant digits (a few minutes are 0.0x hours).
  const axis = (v: number) => numberFormat(i18n.language, { maximumSignificantDigits: 3 }).format(v);
  const hourOf = (at: string) => dateTimeFormat(i18n.language, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' }).format(new Date(at));
  const when = (at: string) =>
    dateTimeFormat(i18n.language, report.step === 'hour' ? { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' } : { day: 'numeric', month: 'short', year: 'numeric' }).format(new Date(at));
  const day = (d: string) => dateTimeFormat(i18n.language, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${d}T00:00:00Z`));
  const none = t('admin_infra.reports.none');
  const groupName = (r: { key: string; name: string }) => r.name || r.key || none;
  const hoursLabel = t('admin_infra.reports.desktop_hours');
  const booked = t('admin_infra.reports.gpu_booked_hours');
  const used = t('admin_infra.reports.gpu_used_hours');
  const signIns = t('admin_infra.reports.sign_ins');
  const concurrent = t('admin_infra.reports.concurrent_desktops');
  const groupLabel = t(`admin_infra.reports.group_by_${report.group_by}`);
  const storageLabel = t('admin_infra.reports.storage');
  const average = t('admin_infra.reports.concurrency_average');
  const mostAtOnce = t('admin_infra.reports.concurrency_most');
  const bytes = (v: number) => formatBytes(v, i18n.language);
  const th = (...cells: string[]) => (
    <Table.Thead>
      <Table.Tr>
        {cells.map((c) => (
          <Table.Th key={c}>{c}</Table.Th>
        ))}
      </Table.Tr>
    </Table.Thead>
  );

  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
        <Total label={hoursLabel} value={n(report.totals.desktop_hours)} testId="report-total-hours" />
        <Total label={t('admin_infra.reports.peak')} value={report.peak ? n(report.peak.desktops) : '—'} detail={report.peak ? hourOf(report.peak.at) : undefined} testId="report-total-peak" />
        <Total label={`${used} / ${booked}`} value={`${n(report.totals.gpu_used_hours)} / ${n(report.totals.gpu_booked_hours)}`} testId="report-total-gpu" />
        <Total label={signIns} value={n(report.totals.sign_ins)} testId="report-total-sign-ins" />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <ReportCard
          id="hours"
          title={t('admin_infra.reports.hours_by', { group: groupLabel })}
          part="desktop_hours"
          query={query}
          empty={report.rows.length === 0}
          chart={
            report.rows.some((r) => r.desktop_hours > 0) ? (
              <BarChart h={260} maxBarWidth={48} data={report.rows.slice(0, CHART_GROUPS).map((r) => ({ name: groupName(r), hours: r.desktop_hours }))} dataKey="name" series={[{ name: 'hours', label: hoursLabel, color: 'blue.6' }]} valueFormatter={axis} />
            ) : (
              <Text c="dimmed" size="sm" py="xl" ta="center">
                {t('admin_infra.reports.no_hours')}
              </Text>
            )
          }
          table={
            <>
              {th(groupLabel, hoursLabel, booked, used, signIns)}
              <Table.Tbody>
                {report.rows.map((r) => (
                  <Table.Tr key={r.key}>
                    <Table.Td>{groupName(r)}</Table.Td>
                    <Table.Td>{n(r.desktop_hours)}</Table.Td>
                    <Table.Td>{n(r.gpu_booked_hours)}</Table.Td>
                    <Table.Td>{n(r.gpu_used_hours)}</Table.Td>
                    <Table.Td>{n(r.sign_ins)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
        />
        <ReportCard
          id="concurrency"
          title={concurrent}
          part="concurrency"
          query={query}
          empty={report.concurrency.length === 0}
          chart={
            <AreaChart
              h={260}
              data={report.concurrency.map((c) => ({ at: when(c.at), desktops: c.desktops, peak: c.peak }))}
              dataKey="at"
              series={[
                { name: 'peak', label: mostAtOnce, color: 'orange.6' },
                { name: 'desktops', label: average, color: 'teal.6' },
              ]}
              curveType="monotone"
              withLegend
              valueFormatter={axis}
            />
          }
          table={
            <>
              {th(t('admin_infra.reports.when'), average, mostAtOnce)}
              <Table.Tbody>
                {report.concurrency.map((c) => (
                  <Table.Tr key={c.at}>
                    <Table.Td>{when(c.at)}</Table.Td>
                    <Table.Td>{n(c.desktops)}</Table.Td>
                    <Table.Td>{n(c.peak)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
          footer={
            report.peak && (
              <Text size="sm" c="dimmed" mt="xs" data-testid="report-peak">
                {t('admin_infra.reports.peak_at', { desktops: n(report.peak.desktops), when: hourOf(report.peak.at) })}
              </Text>
            )
          }
        />
        <ReportCard
          id="gpu"
          title={t('admin_infra.reports.gpu_title')}
          part="gpu"
          query={query}
          empty={!report.hours.some((h) => h.gpu_booked_hours > 0 || h.gpu_used_hours > 0)}
          chart={
            <BarChart
              h={260}
              maxBarWidth={48}
              data={report.hours.map((h) => ({ at: when(h.at), booked: h.gpu_booked_hours, used: h.gpu_used_hours }))}
              dataKey="at"
              series={[
                { name: 'booked', label: booked, color: 'violet.6' },
                { name: 'used', label: used, color: 'orange.6' },
              ]}
              withLegend
              valueFormatter={axis}
            />
          }
          table={
            <>
              {th(t('admin_infra.reports.when'), hoursLabel, booked, used)}
              <Table.Tbody>
                {report.hours.map((h) => (
                  <Table.Tr key={h.at}>
                    <Table.Td>{when(h.at)}</Table.Td>
                    <Table.Td>{n(h.desktop_hours)}</Table.Td>
                    <Table.Td>{n(h.gpu_booked_hours)}</Table.Td>
                    <Table.Td>{n(h.gpu_used_hours)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
        />
        <ReportCard
          id="sign-ins"
          title={t('admin_infra.reports.sign_ins_title')}
          part="sign_ins"
          query={query}
          empty={report.sign_ins.length === 0}
          chart={<BarChart h={260} maxBarWidth={48} data={report.sign_ins.map((s) => ({ day: day(s.day), sign_ins: s.sign_ins }))} dataKey="day" series={[{ name: 'sign_ins', label: signIns, color: 'cyan.6' }]} valueFormatter={axis} />}
          table={
            <>
              {th(t('admin_infra.reports.day'), signIns)}
              <Table.Tbody>
                {report.sign_ins.map((s) => (
                  <Table.Tr key={s.day}>
                    <Table.Td>{day(s.day)}</Table.Td>
                    <Table.Td>{n(s.sign_ins)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
        />
        <ReportCard
          id="storage"
          title={t('admin_infra.reports.storage_title')}
          part="storage"
          query={query}
          empty={report.storage.points.length === 0}
          emptyText={t('admin_infra.reports.storage_empty')}
          chart={<AreaChart h={260} data={report.storage.points.map((p) => ({ at: when(p.at), bytes: p.bytes }))} dataKey="at" series={[{ name: 'bytes', label: storageLabel, color: 'indigo.6' }]} curveType="monotone" valueFormatter={bytes} yAxisProps={{ width: 72 }} />}
          table={
            <>
              {th(t('admin_infra.reports.when'), storageLabel)}
              <Table.Tbody>
                {report.storage.points.map((p) => (
                  <Table.Tr key={p.at}>
                    <Table.Td>{when(p.at)}</Table.Td>
                    <Table.Td>{bytes(p.bytes)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
          footer={
            report.storage.day && (
              <Text size="sm" c="dimmed" mt="xs" data-testid="report-storage-latest">
                {t('admin_infra.reports.storage_latest', { bytes: bytes(report.storage.bytes), day: day(report.storage.day) })}
              </Text>
            )
          }
        />
        <ReportCard
          id="storage-by"
          title={t('admin_infra.reports.storage_by', { group: groupLabel })}
          part="storage_by_group"
          query={query}
          empty={report.storage.rows.length === 0}
          emptyText={t('admin_infra.reports.storage_empty')}
          chart={<BarChart h={260} maxBarWidth={48} data={report.storage.rows.slice(0, CHART_GROUPS).map((r) => ({ name: groupName(r), bytes: r.bytes }))} dataKey="name" series={[{ name: 'bytes', label: storageLabel, color: 'indigo.6' }]} valueFormatter={bytes} yAxisProps={{ width: 72 }} />}
          table={
            <>
              {th(groupLabel, storageLabel)}
              <Table.Tbody>
                {report.storage.rows.map((r) => (
                  <Table.Tr key={r.key}>
                    <Table.Td>{groupName(r)}</Table.Td>
                    <Table.Td>{bytes(r.bytes)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
        />
        <ReportCard
          id="templates"
          title={t('admin_infra.reports.top_templates')}
          part="top_templates"
          query={query}
          empty={report.top_templates.length === 0}
          chart={<BarChart h={260} maxBarWidth={32} orientation="vertical" yAxisProps={{ width: 120 }} data={report.top_templates.map((r) => ({ name: groupName(r), hours: r.desktop_hours }))} dataKey="name" series={[{ name: 'hours', label: hoursLabel, color: 'grape.6' }]} valueFormatter={axis} />}
          table={
            <>
              {th(t('admin_infra.reports.template'), hoursLabel, t('admin_infra.reports.desktops'))}
              <Table.Tbody>
                {report.top_templates.map((r) => (
                  <Table.Tr key={r.key}>
                    <Table.Td>{groupName(r)}</Table.Td>
                    <Table.Td>{n(r.desktop_hours)}</Table.Td>
                    <Table.Td>{n(r.desktops)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </>
          }
        />
      </SimpleGrid>
    </Stack>
  );
}

/** The console's usage reports: a period and a grouping; each part a chart, a table and a CSV. */
export default function ReportsPage() {
  const { t, i18n } = useTranslation();
  const [preset, setPreset] = useState<Preset>('30d');
  const [period, setPeriod] = useState(() => periodOf('30d')!);
  const [groupBy, setGroupBy] = useState<TReportGrouping>('organisation');
  const query: TUsageReportQuery = { ...period, group_by: groupBy };
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(period.from) && /^\d{4}-\d{2}-\d{2}$/.test(period.to);
  const { data, error, isPending } = useQuery({ ...usageReportQuery(query), enabled: valid });
  const choose = (p: Preset) => {
    setPreset(p);
    const next = periodOf(p);
    if (next) setPeriod(next);
  };
  const setDay = (which: 'from' | 'to', value: string) => {
    setPreset('custom');
    setPeriod((p) => ({ ...p, [which]: value }));
  };

  return (
    <>
      <PageHeader title={t('admin_infra.reports.heading')} subtitle={t('admin_infra.reports.subheading')} />
      <Paper withBorder radius="md" p="md" mb="md">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
          <Select
            label={t('admin_infra.reports.period')}
            data={PRESETS.map((p) => ({ value: p, label: t(`admin_infra.reports.preset_${p}`) }))}
            value={preset}
            onChange={(v) => v && choose(v as Preset)}
            allowDeselect={false}
            data-testid="report-preset"
          />
          <TextInput type="date" label={t('admin_infra.reports.from')} value={period.from} max={period.to} onChange={(e) => setDay('from', e.currentTarget.value)} data-testid="report-from" />
          <TextInput type="date" label={t('admin_infra.reports.to')} value={period.to} min={period.from} onChange={(e) => setDay('to', e.currentTarget.value)} data-testid="report-to" />
          <Select
            label={t('admin_infra.reports.group_by')}
            data={REPORT_GROUPINGS.map((g) => ({ value: g, label: t(`admin_infra.reports.group_by_${g}`) }))}
            value={groupBy}
            onChange={(v) => v && setGroupBy(v as TReportGrouping)}
            allowDeselect={false}
            data-testid="report-group-by"
          />
        </SimpleGrid>
      </Paper>
      {error && (
        <Alert color="red" icon={<IconAlertCircle size={18} />} mb="md" data-testid="report-error">
          {errorMessage(t, error, (k) => i18n.exists(k))}
        </Alert>
      )}
      {data ? (
        <Charts report={data} query={query} />
      ) : (
        isPending && valid && (
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            {[0, 1, 2, 3].map((i) => (
              <Skeleton key={i} h={320} radius="md" />
            ))}
          </SimpleGrid>
        )
      )}
    </>
  );
}
