import { scaled } from '../../test/slowdown';
import { describe, expect, it } from 'vitest';
import type { AdminSection } from './section';

// The console's navigation per role (AdminApp's rule), on sections made here: the real ones load screens.
const load = async () => ({ default: () => null });
const icon = () => null;
const SECTIONS: AdminSection[] = [
  { path: 'users', label: 'admin.nav.users', order: 10, roles: ['admin', 'manager'], icon, load },
  { path: 'categories', label: 'admin.nav.categories', order: 30, roles: ['admin'], icon, load },
];

describe('admin console sections', () => {
  it('admins see every section, managers those that list them, others none', async () => {
    const { sectionsFor } = await import('./AdminApp');
    expect(sectionsFor('admin', SECTIONS).map((s) => s.path)).toEqual(['users', 'categories']);
    expect(sectionsFor('manager', SECTIONS).map((s) => s.path)).toEqual(['users']);
    expect(sectionsFor('advanced', SECTIONS)).toEqual([]);
    expect(sectionsFor(undefined, SECTIONS)).toEqual([]);
    // The console's first import transforms its whole shell: seconds on a loaded machine.
  }, scaled(60_000));

  it('the people sections are in order; categories and sign-in providers are for admins only', async () => {
    const { peopleSections } = await import('./people/sections');
    expect(peopleSections.map((s) => s.path)).toEqual(['users', 'groups', 'categories', 'registration_codes', 'api_tokens', 'identity_providers']);
    expect(peopleSections.find((s) => s.path === 'categories')!.roles).toEqual(['admin']);
    expect(peopleSections.find((s) => s.path === 'identity_providers')!.roles).toEqual(['admin']);
  });

  it('the dashboard is the first screen; hypervisors are for admins only', async () => {
    const { adminSections } = await import('./sections');
    expect(adminSections[0]!.path).toBe('dashboard');
    const { infraSections } = await import('./infra/sections');
    expect(infraSections.find((s) => s.path === 'hypervisors')!.roles).toEqual([]);
    for (const path of ['dashboard', 'storage', 'jobs']) expect(infraSections.find((s) => s.path === path)!.roles).toContain('manager');
  });
  it('GPU cards and booking rules are for admins only; managers get the auto-shutdown policies', async () => {
    const { reserveSections } = await import('./reserve/sections');
    expect(reserveSections.map((s) => [s.path, s.roles])).toEqual([['reservables', []], ['booking_rules', []], ['shutdown_policies', ['manager']]]);
  }, scaled(30_000));
  it('the desktops, templates, media and deployments sections come after the people, for admins and managers', async () => {
    const { adminSections } = await import('./sections');
    const paths = adminSections.map((s) => s.path);
    expect(paths.slice(paths.indexOf('identity_providers') + 1, paths.indexOf('identity_providers') + 5)).toEqual(['desktops', 'templates', 'media', 'deployments']);
    const { sectionsFor } = await import('./AdminApp');
    expect(sectionsFor('manager').map((s) => s.path)).toEqual(expect.arrayContaining(['desktops', 'templates', 'media', 'deployments']));
  }, scaled(60_000));
});
