import type { ReactNode } from 'react';
import { Badge, Tabs } from '@mantine/core';

export type ListTab = { value: string; label: string; icon: ReactNode; count?: number; testId: string };

/**
 * The tabs over a list (own / shared…), one look on every screen: Mantine's underlined tabs,
 * an icon, and the number of items in a badge once known. Inside a <Tabs> (whose variant stays the default).
 */
export function ListTabs({ tabs }: { tabs: ListTab[] }) {
  return (
    <Tabs.List>
      {tabs.map((tab) => (
        <Tabs.Tab
          key={tab.value}
          value={tab.value}
          leftSection={tab.icon}
          rightSection={
            tab.count !== undefined ? (
              <Badge size="sm" variant="light" radius="sm">
                {tab.count}
              </Badge>
            ) : null
          }
          data-testid={tab.testId}
        >
          {tab.label}
        </Tabs.Tab>
      ))}
    </Tabs.List>
  );
}
