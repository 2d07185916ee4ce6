import { describe, expect, it } from 'vitest';
import { allows, mounted, navFor, ROUTES, type AppRoute } from './routes';

describe('route table', () => {
  it('has every path of both documents once', () => {
    const paths = ROUTES.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of ['/desktops', '/deployments', '/templates', '/media', '/userstorage', '/recycleBins', '/planning', '/login', '/register', '/maintenance', '/vw/*', '/error/:code']) {
      expect(paths).toContain(p);
    }
  });

  it('gives the navbar the built screens the role may open, in their order', () => {
    const screen = async () => ({ default: () => null });
    const table: AppRoute[] = [
      { path: '/b', name: 'b', title: 'b', access: ['admin'], nav: { order: 2, icon: 'media' }, load: screen },
      { path: '/unbuilt', name: 'unbuilt', title: 'unbuilt', access: ['admin', 'user'], nav: { order: 0, icon: 'media' } },
      { path: '/a', name: 'a', title: 'a', access: ['admin', 'user'], nav: { order: 1, icon: 'media' }, load: screen },
      { path: '/no-nav', name: 'no-nav', title: 'no-nav', access: ['admin', 'user'], load: screen },
    ];
    expect(mounted(table).map((r) => r.name)).toEqual(['b', 'a', 'no-nav']);
    expect(navFor('admin', table).map((r) => r.name)).toEqual(['a', 'b']);
    expect(navFor('user', table).map((r) => r.name)).toEqual(['a']);
    expect(navFor('manager', table)).toEqual([]);
  });

  it('gives each role its navbar', () => {
    const common = ['storage', 'recycleBins', 'viewers'];
    expect(navFor('user').map((r) => r.name)).toEqual(['desktops', 'booking_summary', ...common]);
    expect(navFor('advanced').map((r) => r.name)).toEqual(['desktops', 'deployments', 'pools', 'templates', 'booking_summary', 'media', ...common]);
    expect(navFor('manager').map((r) => r.name)).toEqual(['desktops', 'deployments', 'pools', 'templates', 'booking_summary', 'media', ...common, 'isard_admin']);
    expect(navFor('admin').map((r) => r.name)).toEqual(['desktops', 'deployments', 'pools', 'templates', 'booking_summary', 'planning', 'media', ...common, 'isard_admin']);
  });

  it('keeps planning for admins and deployments for privileged roles', () => {
    const planning = ROUTES.find((r) => r.name === 'planning')!;
    expect(allows(planning.access, 'admin')).toBe(true);
    expect(allows(planning.access, 'manager')).toBe(false);
    const deployments = ROUTES.find((r) => r.name === 'deployments')!;
    expect(['admin', 'manager', 'advanced', 'user'].map((r) => allows(deployments.access, r as never))).toEqual([true, true, true, false]);
  });
});
