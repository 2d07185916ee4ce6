import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, AUDIT_FAMILIES, auditActionKey } from '@vdi/contracts';
import en from '../../../i18n/locales/admin-system/en.json';

// The console names every action the audit log records (and each family its filter offers): the catalogue
// test then holds every language to English.
describe('audit actions', () => {
  const names = en.admin_system.audit.actions as Record<string, string>;
  it('each has its name in the catalogue', () => {
    expect(AUDIT_ACTIONS.filter((a) => !names[auditActionKey(a)])).toEqual([]);
    expect(AUDIT_FAMILIES.filter((f) => !names[f])).toEqual([]);
  });
});
