/**
 * A recycle bin entry's items as the bin writes them, and their history: the piece both the
 * entry's move into the bin (recycle.ts) and its views (entries.ts) read.
 */
import type { TRecycleBinLog } from '@vdi/contracts';
import { schema } from '../../db';
import type { RecycledItems } from '../../db/schema';
import type { UserRow } from '../../auth/sessions';

export type RecycleBinRow = typeof schema.recycleBin.$inferSelect;
export type RecycleItemType = RecycleBinRow['itemType'];

/** Who acts: a person, or the system (the retention purge). */
export type RecycleAgent = Pick<UserRow, 'id' | 'name' | 'roleId' | 'categoryId' | 'groupId'> | 'system';

/** Names shown in the list, kept because owner, group or category may be gone later; and the history. */
export type EntryMeta = {
  ownerName: string;
  ownerRole: string | null;
  ownerCategoryName: string;
  ownerGroupName: string;
  agentType: 'user' | 'system';
  agentRole: string | null;
  agentCategoryId: string | null;
  agentCategoryName: string | null;
  agentGroupId: string | null;
  agentGroupName: string | null;
  logs: TRecycleBinLog[];
};
export type DomainMediaLink = { domainId: string; mediaId: string; kind: 'iso' | 'floppy' };
export type BastionTargetCopy = typeof schema.bastionTargets.$inferSelect;
/** `items` as this module writes it: the schema's fields plus the media links, the bastion targets and the names. */
export type EntryItems = RecycledItems & { domainMedia?: DomainMediaLink[]; bastionTargets?: BastionTargetCopy[]; meta?: EntryMeta };

export const itemsOf = (row: RecycleBinRow) => row.items as EntryItems;

export function logEntry(agent: RecycleAgent, action: string): TRecycleBinLog {
  return agent === 'system'
    ? { time: Math.floor(Date.now() / 1000), action, agent_type: 'system', agent_id: null, agent_name: 'system' }
    : { time: Math.floor(Date.now() / 1000), action, agent_type: 'user', agent_id: agent.id, agent_name: agent.name };
}

/** The items with one more line of history. */
export function withLog(items: EntryItems, agent: RecycleAgent, action: string): EntryItems {
  return items.meta ? { ...items, meta: { ...items.meta, logs: [...items.meta.logs, logEntry(agent, action)] } } : items;
}
