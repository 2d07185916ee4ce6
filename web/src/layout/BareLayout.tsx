import type { ReactNode } from 'react';
import { Outlet } from 'react-router';
import { Box, Center, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Brand } from './Brand';
import { ColorSchemeToggle } from './ColorSchemeToggle';
import { LanguageMenu } from './LanguageMenu';
import classes from './BareLayout.module.css';

/** Full-page screens (sign-in, maintenance, errors): brand, language, and a centred card. */
export function BareLayout() {
  return (
    <Box className={classes.page}>
      <Group justify="space-between" p="md" className={classes.top}>
        <Brand />
        <Group gap="xs">
          <LanguageMenu />
          <ColorSchemeToggle />
        </Group>
      </Group>
      {/* The page's main landmark: every public page has one. */}
      <Center component="main" className={classes.center}>
        <Outlet />
      </Center>
    </Box>
  );
}

export function AuthCard({ title, subtitle, children, width = 420 }: { title: string; subtitle?: string; children: ReactNode; width?: number }) {
  const { t } = useTranslation();
  return (
    <Paper withBorder shadow="md" radius="lg" p={{ base: 'lg', sm: 'xl' }} w="100%" maw={width} className={classes.card}>
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
