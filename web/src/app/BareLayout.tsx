import { Outlet } from 'react-router';
import { Box, Center, Group } from '@mantine/core';
import { Brand } from '../components/Brand';
import { ColorSchemeToggle } from '../components/ColorSchemeToggle';
import { LanguageMenu } from '../components/LanguageMenu';
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
