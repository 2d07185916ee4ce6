import { Button, Center, Group, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconPlugConnectedX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ChunkLoadTimeout } from './chunk-timeout';
import { GuardReadError } from './guard';

/**
 * What a route shows when its screen could not be loaded: its code did not arrive within 120 s
 * (spec core §9), its download failed, or what it needs from the server (the session user, the
 * configuration) did not arrive after a few tries. Instead of a spinner that never ends: what happened and
 * a retry (a fresh load of the page, which fetches the screen again).
 */
export function RouteLoadError({ error }: { error: unknown }) {
  const { t } = useTranslation();
  const kind = error instanceof ChunkLoadTimeout ? 'timeout' : error instanceof GuardReadError ? 'read' : 'failed';
  return (
    <Center mih="60vh" p="md">
      <Stack align="center" gap="sm" maw={440} data-testid="route-load-error" data-kind={kind}>
        <ThemeIcon size={60} radius="xl" variant="light" color="orange">
          <IconPlugConnectedX size={32} />
        </ThemeIcon>
        <Title order={3} ta="center">
          {t('route_error.heading')}
        </Title>
        <Text ta="center" c="dimmed" size="sm">
          {t(`route_error.${kind}`)}
        </Text>
        <Group mt="xs">
          <Button component="a" href="/desktops" variant="default">
            {t('error_page.go_home')}
          </Button>
          <Button onClick={() => window.location.reload()} data-testid="route-load-retry">
            {t('common.retry')}
          </Button>
        </Group>
      </Stack>
    </Center>
  );
}
