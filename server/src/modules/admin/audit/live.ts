import type { AppContext } from '../../../context';
import { onAuditEntry } from '../../../audit/record';
import { notifyAdmins } from '../../../socket/admins';
import { auditView } from './list';

/** Every new audit entry to the console, live: admins, and the managers of its category. Answers the unsubscribe. */
export const feedAuditToConsole = (ctx: AppContext) => onAuditEntry((row) => notifyAdmins(ctx, row.categoryId, 'audit_add', auditView(row)));
