import type { ReactNode } from 'react';
import { Button, Card, Group, Paper, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';

export function EmptyState({ icon, title, body, action }: { icon: ReactNode; title: string; body?: string; action?: ReactNode }) {
  return (
    <Paper withBorder radius="lg" p="xl" style={{ borderStyle: 'dashed' }} data-testid="empty-state">
      <Stack align="center" gap="sm" py="xl">
        <ThemeIcon size={56} radius="xl" variant="light">
          {icon}
        </ThemeIcon>
        <Title order={3} size="h4">
          {title}
        </Title>
        {body && (
          <Text c="dimmed" size="sm" ta="center" maw={420}>
            {body}
          </Text>
        )}
        {action}
      </Stack>
    </Paper>
  );
}

/** A list that could not be loaded: what happened, and a retry. */
export function LoadError({ title, body, retrying, onRetry, testId }: { title: string; body?: string; retrying: boolean; onRetry: () => void; testId?: string }) {
  const { t } = useTranslation();
  return (
    <EmptyState
      icon={<IconAlertTriangle size={30} />}
      title={title}
      body={body}
      action={
        <Button variant="default" loading={retrying} onClick={onRetry} data-testid={testId}>
          {t('common.retry')}
        </Button>
      }
    />
  );
}

/**
 * A list while it loads: three rows of placeholders in a card. `columns`: each placeholder's width
 * (`'flex'` takes the rest), heights as the row's icon, text and action.
 */
export function ListSkeleton({ testId, columns }: { testId: string; columns: { w: number | 'flex'; h: number }[] }) {
  return (
    <Card withBorder radius="lg" data-testid={testId}>
      <Stack gap="md">
        {[0, 1, 2].map((i) => (
          <Group key={i} justify="space-between" wrap="nowrap">
            {columns.map((c, j) => (
              <Skeleton key={j} h={c.h} {...(c.w === 'flex' ? { style: { flex: 1 } } : { w: c.w })} />
            ))}
          </Group>
        ))}
      </Stack>
    </Card>
  );
}
