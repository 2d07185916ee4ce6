import type { ReactNode } from 'react';
import { Table, type TableProps } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { em } from '@mantine/core';
import classes from './CardTable.module.css';

/** Below this width a CardTable is a list of cards (Mantine's xs breakpoint, as in the CSS). */
export const PHONE_QUERY = `(max-width: ${em(575.98)})`;

/**
 * A table for lists a person reads on a phone too: at phone width every row becomes a card
 * (CardTable.module.css); wider, an ordinary table that scrolls sideways below `minWidth`.
 * Give each <Table.Td> a data-label with its column's name: the card shows it.
 */
export function CardTable({ minWidth, children, className, ...props }: TableProps & { minWidth: number; children: ReactNode }) {
  const phone = useMediaQuery(PHONE_QUERY) ?? false;
  const table = (
    <Table {...props} className={[classes.cards, className].filter(Boolean).join(' ')} highlightOnHover={phone ? false : props.highlightOnHover}>
      {children}
    </Table>
  );
  return phone ? table : <Table.ScrollContainer minWidth={minWidth}>{table}</Table.ScrollContainer>;
}
