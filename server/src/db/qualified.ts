import { getTableName, sql, type Column } from 'drizzle-orm';

/**
 * A column as `"table"."column"` in whatever query it is written into: raw SQL fragments and
 * correlated subqueries stay bound to the table meant (Drizzle leaves the table out in single-table selects).
 */
export const qualified = (c: Column) => sql`${sql.identifier(getTableName(c.table))}.${sql.identifier(c.name)}`;
