import { useEffect, useRef, type ReactNode } from 'react';
import { Table, type TableProps } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { em } from '@mantine/core';
import classes from './CardTable.module.css';

/** Below this width a CardTable is a list of cards (Mantine's xs breakpoint, as in the CSS). */
export const PHONE_QUERY = `(max-width: ${em(575.98)})`;

/**
 * Each cell without a data-label gets its column's heading (the text of its <th>), so that the
 * card shows what the value is; rows added later too. Headings without text (a checkbox, the
 * actions) give none.
 */
function labelCells(table: HTMLTableElement) {
  const headings: string[] = [];
  for (const th of table.tHead?.rows[0]?.cells ?? []) {
    for (let i = 0; i < th.colSpan; i++) headings.push(th.textContent?.trim() ?? '');
  }
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      let column = 0;
      for (const cell of row.cells) {
        const label = headings[column];
        if (label && !cell.hasAttribute('data-label') && row.cells.length > 1) cell.setAttribute('data-label', label);
        column += cell.colSpan;
      }
    }
  }
}

/**
 * A table for lists a person reads on a phone too: at phone width every row becomes a card
 * (CardTable.module.css); wider, an ordinary table that scrolls sideways below `minWidth`.
 * On the card each value has its column's name before it: a <Table.Td>'s data-label, or else
 * the heading of its column.
 */
export function CardTable({ minWidth, children, className, ...props }: TableProps & { minWidth: number; children: ReactNode }) {
  const phone = useMediaQuery(PHONE_QUERY) ?? false;
  const ref = useRef<HTMLTableElement>(null);
  useEffect(() => {
    const table = ref.current;
    if (!phone || !table) return;
    labelCells(table);
    const observer = new MutationObserver(() => labelCells(table));
    observer.observe(table, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [phone]);
  const table = (
    <Table {...props} ref={ref} className={[classes.cards, className].filter(Boolean).join(' ')} highlightOnHover={phone ? false : props.highlightOnHover}>
      {children}
    </Table>
  );
  return phone ? table : <Table.ScrollContainer minWidth={minWidth}>{table}</Table.ScrollContainer>;
}
