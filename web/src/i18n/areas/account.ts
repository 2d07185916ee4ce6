// The account area's texts (`account.*`, locales/account/): every module that shows them imports
// this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('account');
