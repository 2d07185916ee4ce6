// The bookings area's texts (`bookings.*`, `planner.*`, locales/bookings/): every module that shows
// them imports this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('bookings');
