import type { ReactNode } from 'react';
import { ScrollArea, type ScrollAreaAutosizeProps } from '@mantine/core';

/**
 * A box that scrolls when its content is taller (or, at phone width, wider) than it, reachable by keyboard: its
 * viewport takes the focus, so the arrow keys scroll it, and is a region named `label` (WCAG 2.1.1; axe's
 * scrollable-region-focusable). A table of rows in a dialog is the usual case: a ScrollArea of text alone has
 * nothing focusable inside, and a keyboard could not reach what is below or beside the fold.
 */
export function ScrollBox({ label, children, viewportProps, ...props }: ScrollAreaAutosizeProps & { label: string; children: ReactNode }) {
  return (
    <ScrollArea.Autosize type="auto" {...props} viewportProps={{ tabIndex: 0, role: 'region', 'aria-label': label, ...viewportProps }}>
      {children}
    </ScrollArea.Autosize>
  );
}
