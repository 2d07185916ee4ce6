import { Alert, Badge, Group, Paper, Progress, SimpleGrid, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconAlertCircle, IconCalendarEvent, IconCpu, IconDeviceDesktop, IconHistory, IconLoader, IconUsers } from '@tabler/icons-react';
import dayjs from 'dayjs';
import { lazy, Suspense, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { PageHeader } from '../../../components/PageHeader';
import { errorMessage } from '../../../lib/errors';
import { dashboardQuery } from './api';
import { formatMb, percent } from './format';
import { loadArea } from '../../../i18n';
import '../../../i18n/areas/admin-infra';
import { builtInText } from '../../../lib/built-in-text';
import { numberFormat } from '../../../i18n/intl';

// The history's charts (a charting library) load after the numbers.
const DashboardHistory = lazy(() => import('./DashboardHistory'));

// The audit entries' action names are the audit screen's texts.
await loadArea('admin-system');

function Stat({ icon, color, label, value, detail, testId, children }: { icon: ReactNode; color: string; label: string; value: string; detail?: string; testId: string; children?: ReactNode }) {
  return (
    <Paper withBorder radius="md" p="md" data-testid={testId}>
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Stack gap={2}>
          <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
            {label}
          </Text>
          <Text fz={28} fw={700} lh={1.1} data-testid={`${testId}-value`}>
            {value}
          </Text>
          {detail && (
            <Text size="sm" c="dimmed">
              {detail}
            </Text>
          )}
        </Stack>
        <ThemeIcon variant="light" color={color} size={40} radius="md">
          {icon}
        </ThemeIcon>
      </Group>
      {children}
    </Paper>
  );
}

/** The console's first screen: what happens now, live (read again every few seconds). */
export default function DashboardPage() {
  const { t, i18n } = useTranslation();
  const { data, error, isPending } = useQuery(dashboardQuery);
  const n = (v: number) => numberFormat(i18n.language).format(v);

  return (
    <>
      <PageHeader
        title={t('admin_infra.dashboard.heading')}
        subtitle={data?.category ? t('admin_infra.dashboard.subheading_category') : t('admin_infra.dashboard.subheading')}
        actions={
          data && (
            <Badge variant="dot" color="teal" size="lg" data-testid="dashboard-live">
              {t('admin_infra.dashboard.live', { time: dayjs(data.at).format('HH:mm:ss') })}
            </Badge>
          )
        }
      />
      {error && !data ? (
        <Alert color="red" icon={<IconAlertCircle size={18} />} title={t('admin_infra.load_failed')} data-testid="dashboard-error">
          {errorMessage(t, error, (k) => i18n.exists(k))}
        </Alert>
      ) : isPending || !data ? (
        <SimpleGrid cols={{ base: 1, xs: 2, lg: 3 }}>
          {[0, 1, 2, 3, 4, 5].map((i) => (
            <Skeleton key={i} height={110} radius="md" />
          ))}
        </SimpleGrid>
      ) : (
        <Stack gap="lg">
          <SimpleGrid cols={{ base: 1, xs: 2, lg: data.hypervisors ? 3 : 2 }}>
            <Stat
              testId="dash-users"
              icon={<IconUsers size={22} />}
              color="blue"
              label={t('admin_infra.dashboard.users_online')}
              value={n(data.users_online)}
              detail={t('admin_infra.dashboard.of_users', { count: data.users_total, total: n(data.users_total) })}
            />
            <Stat
              testId="dash-desktops"
              icon={<IconDeviceDesktop size={22} />}
              color="teal"
              label={t('admin_infra.dashboard.desktops_running')}
              value={n(data.desktops_running)}
              detail={t('admin_infra.dashboard.of_desktops', { count: data.desktops_total, total: n(data.desktops_total) })}
            >
              <Progress mt="sm" size="sm" value={percent(data.desktops_running, data.desktops_total)} color="teal" aria-label={t('admin_infra.dashboard.desktops_running')} />
            </Stat>
            {data.hypervisors && (
              <Stat
                testId="dash-hypervisors"
                icon={<IconCpu size={22} />}
                color="grape"
                label={t('admin_infra.dashboard.hypervisor_load')}
                value={`${n(Math.round(data.hypervisors.cpu_used_percent))} %`}
                detail={t('admin_infra.dashboard.hypervisors_detail', {
                  online: data.hypervisors.online,
                  total: data.hypervisors.total,
                  load: numberFormat(i18n.language, { maximumFractionDigits: 2 }).format(data.hypervisors.load),
                  used: formatMb(data.hypervisors.memory_used_mb, i18n.language),
                  memory: formatMb(data.hypervisors.memory_total_mb, i18n.language),
                })}
              >
                <Progress mt="sm" size="sm" value={data.hypervisors.cpu_used_percent} color="grape" aria-label={t('admin_infra.dashboard.hypervisor_load')} />
                {data.hypervisors.accepting < data.hypervisors.online && (
                  <Badge mt="sm" color="orange" variant="light" data-testid="dash-no-new-starts">
                    {t('admin_infra.dashboard.no_new_starts')}
                  </Badge>
                )}
              </Stat>
            )}
            <Stat testId="dash-bookings" icon={<IconCalendarEvent size={22} />} color="orange" label={t('admin_infra.dashboard.bookings_today')} value={n(data.bookings_today)} />
            <Stat
              testId="dash-jobs"
              icon={<IconLoader size={22} />}
              color="cyan"
              label={t('admin_infra.dashboard.jobs_busy')}
              value={n(data.jobs_busy)}
              detail={data.jobs_busy > 0 ? undefined : t('admin_infra.dashboard.jobs_idle')}
            />
          </SimpleGrid>
          <Suspense fallback={<Skeleton h={280} radius="md" />}>
            <DashboardHistory />
          </Suspense>
          <Paper withBorder radius="md" p="md" data-testid="dash-audit">
            <Group justify="space-between" mb="sm">
              <Group gap="xs">
                <IconHistory size={18} />
                <Title order={2} size="h4">
                  {t('admin_infra.dashboard.last_audit')}
                </Title>
              </Group>
              <Text component={Link} to="/isard-admin/audit" size="sm" c="blue">
                {t('admin_infra.dashboard.all_audit')}
              </Text>
            </Group>
            {data.audit.length === 0 ? (
              <Text size="sm" c="dimmed">
                {t('admin_infra.dashboard.no_audit')}
              </Text>
            ) : (
              <Stack gap={6}>
                {data.audit.map((e) => (
                  <Group key={e.id} gap="sm" wrap="nowrap" justify="space-between" data-testid="dash-audit-row">
                    <Text size="sm" style={{ minWidth: 0 }} truncate>
                      <b>{e.actor_name || t('admin_infra.dashboard.system')}</b> · {t(`admin_system.audit.actions.${e.action.replace(/\./g, '_')}`, { defaultValue: e.action })}
                      {e.object_name ? ` · ${builtInText(t, e.object_name)}` : ''}
                    </Text>
                    <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                      {dayjs(e.at).format('HH:mm:ss')}
                    </Text>
                  </Group>
                ))}
              </Stack>
            )}
          </Paper>
        </Stack>
      )}
    </>
  );
}
