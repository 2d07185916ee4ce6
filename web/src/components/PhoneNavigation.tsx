import type { ReactNode } from 'react';
import { Drawer, em, Group } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { ColorSchemeToggle } from './ColorSchemeToggle';
import { LanguageMenu } from './LanguageMenu';

/** Below Mantine's sm breakpoint the navigation is a drawer behind the menu button. */
export const PHONE_NAV_QUERY = `(max-width: ${em(767.98)})`;

/** Whether the navigation is a drawer (phone width) rather than the sidebar. */
export const usePhoneNavigation = () => useMediaQuery(PHONE_NAV_QUERY) ?? false;

/**
 * The navigation on a phone (the portal's and the admin console's): a drawer that holds the focus
 * while open; Escape closes it and the focus goes back to the menu button. Below `xs` it also holds
 * the language and colour-scheme controls the header has no room for.
 */
export function NavigationDrawer({ opened, onClose, title, children }: { opened: boolean; onClose: () => void; title: string; children: ReactNode }) {
  return (
    <Drawer opened={opened} onClose={onClose} size={290} padding="sm" title={title} data-testid="nav-drawer">
      {children}
      <Group mt="md" hiddenFrom="xs">
        <LanguageMenu variant="default" testId="mobile-language-menu" />
        <ColorSchemeToggle />
      </Group>
    </Drawer>
  );
}
