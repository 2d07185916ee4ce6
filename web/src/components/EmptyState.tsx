import type { ReactNode } from 'react';
import { Paper, Stack, Text, ThemeIcon, Title } from '@mantine/core';

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
