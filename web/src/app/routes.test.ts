import { describe, expect, it } from 'vitest';
import { allows, mounted, navFor, ROUTES } from './routes';

describe('route table', () => {
  it('has every path of both documents once', () => {
    const paths = ROUTES.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of ['/desktops', '/deployments', '/templates', '/media', '/userstorage', '/recycleBins', '/planning', '/login', '/register', '/maintenance', '/vw/*', '/error/:code']) {
      expect(paths).toContain(p);
    }
  });

  it('gives the navbar only built screens the role may open', () => {
    for (const role of ['admin', 'manager', 'advanced', 'user'] as const) {
      for (const r of navFor(role)) {
        expect(r.load).toBeDefined();
        expect(allows(r.access, role)).toBe(true);
      }
    }
    expect(navFor('user').some((r) => r.name === 'deployments')).toBe(false);
    expect(mounted().every((r) => typeof r.load === 'function')).toBe(true);
  });

  it('keeps planning for admins and deployments for privileged roles', () => {
    const planning = ROUTES.find((r) => r.name === 'planning')!;
    expect(allows(planning.access, 'admin')).toBe(true);
    expect(allows(planning.access, 'manager')).toBe(false);
    const deployments = ROUTES.find((r) => r.name === 'deployments')!;
    expect(['admin', 'manager', 'advanced', 'user'].map((r) => allows(deployments.access, r as never))).toEqual([true, true, true, false]);
  });
});
