import { useMemo, useRef, useState } from 'react';
import FullCalendar, { type DateSelectInfo, type EventClickInfo, type EventInput } from '@fullcalendar/react';
import classicThemePlugin from '@fullcalendar/react/themes/classic';
import dayGridPlugin from '@fullcalendar/react/daygrid';
import timeGridPlugin from '@fullcalendar/react/timegrid';
import interactionPlugin from '@fullcalendar/react/interaction';
import listPlugin from '@fullcalendar/react/list';
import caLocale from '@fullcalendar/react/locales/ca';
import deLocale from '@fullcalendar/react/locales/de';
import eoLocale from '@fullcalendar/react/locales/eo';
import esLocale from '@fullcalendar/react/locales/es';
import euLocale from '@fullcalendar/react/locales/eu';
import frLocale from '@fullcalendar/react/locales/fr';
import koLocale from '@fullcalendar/react/locales/ko';
import plLocale from '@fullcalendar/react/locales/pl';
import ruLocale from '@fullcalendar/react/locales/ru';
import zhCnLocale from '@fullcalendar/react/locales/zh-cn';
import '@fullcalendar/react/skeleton.css';
import '@fullcalendar/react/themes/classic/theme.css';
import '@fullcalendar/react/themes/classic/palette.css';
import { useComputedColorScheme } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { loadRange } from './dates';
import { shownHours } from './logic';
import classes from './Calendar.module.css';

const LOCALES = [caLocale, deLocale, eoLocale, esLocale, euLocale, frLocale, koLocale, plLocale, ruLocale, zhCnLocale];
/** FullCalendar's name of a language's locale (Simplified Chinese is its `zh-cn`; English in the European week of en-GB). */
const calendarLocale = (lang: string) => (lang === 'zh-Hans' ? 'zh-cn' : lang.startsWith('en') ? 'en-GB' : lang.slice(0, 2));

export type CalendarView = 'timeGridWeek' | 'dayGridMonth' | 'listMonth';

export type CalendarProps = {
  events: EventInput[];
  /** Shown in the month view only (whole-day backgrounds, which the week view would stretch over every hour). */
  monthEvents?: EventInput[];
  /** Called with the range to load (last Monday to next Sunday of what is visible). */
  onRange: (range: { start: Date; end: Date }) => void;
  views?: CalendarView[];
  initialView?: CalendarView;
  onSelect?: (start: Date, end: Date) => void;
  onEventClick?: (id: string, info: EventClickInfo) => void;
  testId?: string;
};

/** One FullCalendar 7 (its own locales translate the toolbar) for every calendar of the portal: week and month views, local time, Mantine colours. */
export function Calendar({ events, monthEvents, onRange, views = ['timeGridWeek', 'dayGridMonth'], initialView = 'timeGridWeek', onSelect, onEventClick, testId = 'calendar' }: CalendarProps) {
  const { t, i18n } = useTranslation();
  const scheme = useComputedColorScheme('light');
  // The week opens on the working hours (widened to now and to its bookings); the whole day is one click away.
  const [wholeDay, setWholeDay] = useState(false);
  const lastRange = useRef('');
  const [view, setView] = useState<string>(initialView);
  const shown = useMemo(() => (monthEvents && view === 'dayGridMonth' ? [...events, ...monthEvents] : events), [events, monthEvents, view]);
  const hours = useMemo(() => shownHours(shown, new Date(), wholeDay), [shown, wholeDay]);
  const hh = (h: number) => `${String(h).padStart(2, '0')}:00:00`;
  const locale = calendarLocale(i18n.language);
  // The "today" button is named by what it shows (FullCalendar's hint, "This week", is not its text: WCAG 2.5.3).
  const todayText = LOCALES.find((l) => l.code === locale)?.todayText ?? 'Today';
  return (
    <div className={classes.calendar} data-testid={testId}>
      <FullCalendar
        plugins={[classicThemePlugin, dayGridPlugin, timeGridPlugin, interactionPlugin, listPlugin]}
        locales={LOCALES}
        locale={calendarLocale(i18n.language)}
        colorScheme={scheme}
        todayHint={todayText}
        initialView={initialView}
        buttons={{ hours: { text: t(wholeDay ? 'calendar.working_hours' : 'calendar.whole_day'), click: () => setWholeDay((w) => !w) } }}
        headerToolbar={{ start: 'title', center: views.length > 1 ? views.join(',') : '', end: `${view.startsWith('timeGrid') ? 'hours ' : ''}today prev,next` }}
        firstDay={1}
        // The whole day at once, scrolled with the page: an inner scrolling pane inside FullCalendar's
        // grid could not take the keyboard's focus without breaking the grid's roles (WCAG 2.1.1, 1.3.1).
        contentHeight="auto"
        allDaySlot={false}
        nowIndicator
        slotDuration="00:30:00"
        slotMinTime={hh(hours.min)}
        slotMaxTime={hh(hours.max)}
        slotHeaderFormat={{ hour: '2-digit', minute: '2-digit', hour12: false }}
        eventTimeFormat={{ hour: '2-digit', minute: '2-digit', hour12: false }}
        dayMaxEvents={4}
        selectable={Boolean(onSelect)}
        selectMirror
        selectOverlap
        events={shown}
        select={(info: DateSelectInfo) => {
          onSelect?.(info.start, info.end);
          info.view.calendar.unselect();
        }}
        eventClick={(info: EventClickInfo) => {
          if (info.event.display === 'background') return;
          onEventClick?.(info.event.id, info);
        }}
        datesSet={(info) => {
          setView(info.view.type);
          const range = loadRange(info.start, info.end);
          const key = `${range.start.getTime()}-${range.end.getTime()}`;
          if (key === lastRange.current) return;
          lastRange.current = key;
          onRange(range);
        }}
      />
    </div>
  );
}
