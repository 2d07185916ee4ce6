import { describe, expect, it } from 'vitest';
import { darken, mergeMantineTheme, DEFAULT_THEME } from '@mantine/core';
import { accessibleColors, contrast, theme } from './theme';

const full = mergeMantineTheme(DEFAULT_THEME, theme);
const vars = accessibleColors(full);
const names = Object.keys(full.colors).filter((c) => c !== 'dark');

describe('theme colours (WCAG 2.2 AA, 4.5:1)', () => {
  it('carries white text on every filled colour, in both schemes', () => {
    for (const scheme of ['light', 'dark'] as const)
      for (const c of names) expect(contrast(vars[scheme][`--mantine-color-${c}-filled`]!, '#ffffff'), `${c} filled, ${scheme}`).toBeGreaterThanOrEqual(4.5);
  });

  it('gives every colour a text colour readable on the page and on cards', () => {
    for (const c of names) {
      for (const bg of ['#ffffff', '#f1f3f5']) expect(contrast(vars.light[`--mantine-color-${c}-text`]!, bg), `${c} text on ${bg}`).toBeGreaterThanOrEqual(4.5);
      for (const bg of ['#1f1f1f', '#242424', '#2e2e2e']) expect(contrast(vars.dark[`--mantine-color-${c}-text`]!, bg), `${c} text on ${bg}`).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('makes light buttons readable on their tint and under the pointer, in both schemes', () => {
    for (const c of names) {
      const v = full.colors[c]!;
      // Light scheme: Mantine's tint is shade 1, shade 2 under the pointer; the text is the theme's.
      for (const bg of [v[1], v[2]]) expect(contrast(vars.light[`--mantine-color-${c}-light-color`]!, bg), `${c} light button on ${bg}`).toBeGreaterThanOrEqual(4.5);
      // Dark scheme: Mantine's shade 0 on shade 9 darkened by half (0.3 under the pointer).
      for (const bg of [darken(v[9], 0.5), darken(v[9], 0.3)]) expect(contrast(v[0], bg), `${c} light button, dark, on ${bg}`).toBeGreaterThanOrEqual(4.5);
    }
    expect(contrast(DEFAULT_THEME.colors.indigo[9], DEFAULT_THEME.colors.indigo[2]), "Mantine's own light button under the pointer").toBeLessThan(4.5);
  });

  it("makes a field's error text readable", () => {
    for (const bg of ['#ffffff', '#f1f3f5', '#e9ecef']) expect(contrast(vars.light['--mantine-color-error']!, bg)).toBeGreaterThanOrEqual(4.5);
    for (const bg of ['#1f1f1f', '#242424', '#2e2e2e', '#3b3b3b']) expect(contrast(vars.dark['--mantine-color-error']!, bg)).toBeGreaterThanOrEqual(4.5);
  });

  it('keeps the dimmed grey readable', () => {
    for (const bg of ['#ffffff', '#f1f3f5', '#e9ecef']) expect(contrast(vars.light['--mantine-color-dimmed']!, bg)).toBeGreaterThanOrEqual(4.5);
    for (const bg of ['#1f1f1f', '#242424', '#2e2e2e', '#3b3b3b']) expect(contrast(vars.dark['--mantine-color-dimmed']!, bg)).toBeGreaterThanOrEqual(4.5);
  });

  it("Mantine's own shades fall short (why the theme changes them)", () => {
    expect(contrast(DEFAULT_THEME.colors.gray[6], '#ffffff')).toBeLessThan(4.5);
    expect(contrast(DEFAULT_THEME.colors.indigo[6], '#ffffff')).toBeLessThan(4.5);
  });
});
