// The console's reservation screens' texts (`admin_reserve.*`, locales/admin-reserve/): GPU cards,
// booking rules and auto-shutdown policies. Every module that shows them imports this one, so the
// screen waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('admin-reserve');
