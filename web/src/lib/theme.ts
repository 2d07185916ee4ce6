import { createTheme, darken, isVirtualColor, lighten, luminance, mergeThemeOverrides, type CSSVariablesResolver, type MantineTheme } from '@mantine/core';

/** WCAG 2.2 AA: text (and white text on a colour) at least 4.5:1 against what is behind it. */
export const MIN_CONTRAST = 4.5;

export const contrast = (a: string, b: string) => {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
};

/** The colour, darkened (or lightened) in small steps until it reaches `min` against `against`. */
export function readable(color: string, against: string, min = MIN_CONTRAST, direction: 'darken' | 'lighten' = 'darken') {
  let c = color;
  for (let step = 0; step < 40 && contrast(c, against) < min; step++) c = direction === 'darken' ? darken(c, 0.04) : lighten(c, 0.04);
  return c;
}

// The backgrounds text sits on: the page and cards (white / dark-7) and the slightly tinted
// surfaces (gray-1 / dark-6); a little margin over 4.5 keeps rounding in the browser on the safe side.
const LIGHT_SURFACES = ['#ffffff', '#f1f3f5', '#e9ecef', '#edf2ff'];
const DARK_SURFACES = ['#1f1f1f', '#242424', '#2e2e2e', '#3b3b3b', '#343a55'];
const readableOn = (color: string, surfaces: string[], direction: 'darken' | 'lighten') =>
  surfaces.reduce((c, s) => readable(c, s, MIN_CONTRAST + 0.1, direction), color);

/** A colour used for text on the page or on its own light tint, made readable in the scheme. */
export const readableText = (color: string, scheme: 'light' | 'dark') =>
  scheme === 'dark' ? readableOn(color, DARK_SURFACES, 'lighten') : readableOn(color, LIGHT_SURFACES, 'darken');

/**
 * The colours every component takes, made readable once here: a colour's filled surface
 * carries white text at 4.5:1 or more (Mantine's shade 6 of indigo, red, green… does not), its
 * text colour on the page reaches 4.5:1, and the dimmed grey too, in both schemes.
 */
export const accessibleColors: CSSVariablesResolver = (theme: MantineTheme) => {
  const light: Record<string, string> = {};
  const dark: Record<string, string> = {};
  const shade = (scheme: 'light' | 'dark') => (typeof theme.primaryShade === 'number' ? theme.primaryShade : theme.primaryShade[scheme]);
  for (const [name, value] of Object.entries(theme.colors)) {
    if (isVirtualColor(value) || name === 'dark') continue;
    const filledLight = readable(value[shade('light')], '#ffffff', MIN_CONTRAST + 0.1);
    const filledDark = readable(value[shade('dark')], '#ffffff', MIN_CONTRAST + 0.1);
    Object.assign(light, {
      [`--mantine-color-${name}-filled`]: filledLight,
      [`--mantine-color-${name}-filled-hover`]: darken(filledLight, 0.1),
      [`--mantine-color-${name}-text`]: readableOn(filledLight, LIGHT_SURFACES, 'darken'),
      [`--mantine-color-${name}-outline`]: readableOn(filledLight, LIGHT_SURFACES, 'darken'),
      // A light button's text on its tint and on the darker tint under the pointer (indigo-9 on indigo-2 was 4.1:1).
      [`--mantine-color-${name}-light-color`]: readableOn(value[9], [value[1], value[2]], 'darken'),
    });
    Object.assign(dark, {
      [`--mantine-color-${name}-filled`]: filledDark,
      [`--mantine-color-${name}-filled-hover`]: darken(filledDark, 0.1),
      [`--mantine-color-${name}-text`]: readableOn(value[4], DARK_SURFACES, 'lighten'),
      [`--mantine-color-${name}-outline`]: readableOn(value[4], DARK_SURFACES, 'lighten'),
    });
  }
  light['--mantine-color-dimmed'] = readableOn(theme.colors.gray[6], LIGHT_SURFACES, 'darken');
  dark['--mantine-color-dimmed'] = readableOn(theme.colors.dark[2], DARK_SURFACES, 'lighten');
  // A field's error text (Mantine's red-6 is 3.3:1 on white) and its border.
  light['--mantine-color-error'] = readableOn(theme.colors.red[6], LIGHT_SURFACES, 'darken');
  dark['--mantine-color-error'] = readableOn(theme.colors.red[6], DARK_SURFACES, 'lighten');
  light['--mantine-color-placeholder'] = readableOn(theme.colors.gray[5], LIGHT_SURFACES, 'darken');
  dark['--mantine-color-placeholder'] = readableOn(theme.colors.dark[3], DARK_SURFACES, 'lighten');
  return { variables: {}, light, dark };
};

/** An opened menu takes the focus on its first item (Mantine's own placeholder is gone, see Menu below). */
function focusOpenMenu() {
  const tryFocus = (left: number) =>
    setTimeout(() => {
      const menu = [...document.querySelectorAll<HTMLElement>('[role=menu][data-menu-dropdown]')].pop();
      if (menu?.contains(document.activeElement)) return;
      const item = menu?.querySelector<HTMLElement>('[data-menu-item]:not([data-disabled])');
      if (item) item.focus({ preventScroll: true });
      else if (left > 0) tryFocus(left - 1);
    }, 30);
  tryFocus(10);
}

export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: { light: 7, dark: 8 },
  defaultRadius: 'md',
  fontFamily: 'Inter, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans", sans-serif',
  headings: { fontWeight: '700' },
  cursorType: 'pointer',
  // A visible focus ring on every focusable element reached by keyboard (styles/first.css draws it
  // on elements outside Mantine's components too).
  focusRing: 'auto',
  // Dialogs, menus and popovers appear without their fade for whoever asks the system for less motion (styles/first.css).
  respectReducedMotion: true,
  components: {
    Button: { defaultProps: { radius: 'md' } },
    Paper: { defaultProps: { radius: 'lg' } },
    // A table wider than the screen scrolls sideways: the keyboard can reach (and scroll) it too.
    TableScrollContainer: { defaultProps: { scrollAreaProps: { viewportProps: { tabIndex: 0 } } } },
    // A link in a sentence is told apart by more than its colour (WCAG 1.4.1).
    Anchor: { defaultProps: { underline: 'always' } },
    // A closed menu gives the focus back to its button (and so does a dialog opened from one of its items).
    // No focus placeholder inside the menu (a presentational element a menu may not hold, WCAG 1.3.1):
    // the dropdown takes the focus and the arrow keys move to the items.
    Menu: { defaultProps: { returnFocus: true, withInitialFocusPlaceholder: false, onOpen: focusOpenMenu } },
    // A dialog's or drawer's title bar is no page banner (Mantine draws it as <header>: each open dialog
    // added a second banner landmark); the dialog's own role and name say what it is.
    ModalHeader: { defaultProps: { component: 'div' } },
    DrawerHeader: { defaultProps: { component: 'div' } },
  },
});

/**
 * The theme with the words Mantine's own controls need in the interface language: every close
 * button (dialogs, drawers, notifications, alerts) and every pager arrow is named. Notifications are said by the live
 * regions (lib/live.tsx), not a second time by their own role.
 */
export type ThemeLabels = { close: string; page: Record<'first' | 'previous' | 'next' | 'last', string> };

export const themeIn = (labels: ThemeLabels) =>
  mergeThemeOverrides(theme, {
    components: {
      Modal: { defaultProps: { closeButtonProps: { 'aria-label': labels.close } } },
      Drawer: { defaultProps: { closeButtonProps: { 'aria-label': labels.close } } },
      Notification: { defaultProps: { closeButtonProps: { 'aria-label': labels.close }, role: 'none' } },
      Alert: { defaultProps: { closeButtonLabel: labels.close } },
      CloseButton: { defaultProps: { 'aria-label': labels.close } },
      // The arrows of every pager are named.
      Pagination: { defaultProps: { getControlProps: (control: keyof ThemeLabels['page']) => ({ 'aria-label': labels.page[control] }) } },
    },
  });
