import { useCallback, useMemo } from 'react';
import { Button, Checkbox, Divider, Popover, Stack } from '@mantine/core';
import { useLocalStorage } from '@mantine/hooks';
import { IconColumns3 } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import '../../../i18n/areas/admin';

/**
 * The columns a console list shows, chosen by the person and kept in this browser (localStorage,
 * `vdi-columns:<table>`): any of the console's tables names its columns once, reads which are shown
 * from `useColumns` and puts `ColumnsMenu` above it. A column the person never chose keeps its
 * default, so a column added later shows up (or not) as its table decides.
 */
export type ColumnDef<K extends string = string> = {
  key: K;
  label: string;
  /** Shown until the person hides it (the defaults fit the console at 1,280 px). */
  shown: boolean;
  /** Always shown (the row's name): its box is ticked and disabled. */
  fixed?: boolean;
  /** About how wide it is (px): the table scrolls sideways only below the sum of the shown ones. */
  width: number;
};

type Choice = Record<string, boolean>;

export function useColumns<K extends string>(table: string, columns: ColumnDef<K>[]) {
  const [choice, setChoice] = useLocalStorage<Choice>({
    key: `vdi-columns:${table}`,
    defaultValue: {},
    // Read at once (no first render with the defaults and a second with the choice).
    getInitialValueInEffect: false,
  });
  const shown = useMemo(
    () => new Set(columns.filter((c) => c.fixed || (choice[c.key] ?? c.shown)).map((c) => c.key)),
    [columns, choice],
  );
  const show = useCallback((key: K, on: boolean) => setChoice((c) => ({ ...c, [key]: on })), [setChoice]);
  const reset = useCallback(() => setChoice({}), [setChoice]);
  const width = columns.filter((c) => shown.has(c.key)).reduce((sum, c) => sum + c.width, 0);
  return { columns, shown, has: (key: K) => shown.has(key), show, reset, width, custom: Object.keys(choice).length > 0 };
}

/** The "Columns" button: a box per column, ticked when shown, and a way back to the defaults. `testPrefix`: the list's prefix. */
export function ColumnsMenu<K extends string>({ state, testPrefix }: { state: ReturnType<typeof useColumns<K>>; testPrefix: string }) {
  const { t } = useTranslation();
  return (
    <Popover position="bottom-end" shadow="md" withinPortal trapFocus returnFocus>
      <Popover.Target>
        <Button variant="default" ml="auto" leftSection={<IconColumns3 size={16} />} data-testid={`${testPrefix}-columns`}>
          {t('admin.common.columns')}
        </Button>
      </Popover.Target>
      <Popover.Dropdown data-testid={`${testPrefix}-columns-menu`}>
        <Stack gap="xs">
          <Checkbox.Group
            label={t('admin.common.columns_shown')}
            value={[...state.shown]}
            onChange={(keys) => state.columns.forEach((c) => !c.fixed && keys.includes(c.key) !== state.shown.has(c.key) && state.show(c.key, keys.includes(c.key)))}
          >
            <Stack gap={6} mt="xs">
              {state.columns.map((c) => (
                <Checkbox key={c.key} value={c.key} label={c.label} disabled={c.fixed} data-testid={`${testPrefix}-column-${c.key}`} />
              ))}
            </Stack>
          </Checkbox.Group>
          <Divider />
          <Button size="xs" variant="subtle" disabled={!state.custom} onClick={state.reset} data-testid={`${testPrefix}-columns-default`}>
            {t('admin.common.columns_default')}
          </Button>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
