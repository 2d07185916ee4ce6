import type { ReactNode } from 'react';
import { Paper, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/**
 * The centred card of the full-page screens (sign-in, maintenance, errors). Opaque, with no backdrop blur: a blur behind
 * an opaque card never shows, and a browser without graphics acceleration (a thin client, a desktop inside a virtual
 * machine) composed it again at every blink of the sign-in field's caret, 6-8 % of a core while the form waited.
 */
export function AuthCard({ title, subtitle, children, width = 420 }: { title: string; subtitle?: string; children: ReactNode; width?: number }) {
  const { t } = useTranslation();
  return (
    <Paper withBorder shadow="md" radius="lg" p={{ base: 'lg', sm: 'xl' }} w="100%" maw={width}>
      <Stack gap={4} mb="lg">
        <Title order={1} size="h3">
          {title}
        </Title>
        {subtitle && (
          <Text c="dimmed" size="sm">
            {subtitle}
          </Text>
        )}
      </Stack>
      {children}
      <Text c="dimmed" size="xs" ta="center" mt="xl">
        {t('app.tagline')}
      </Text>
    </Paper>
  );
}
