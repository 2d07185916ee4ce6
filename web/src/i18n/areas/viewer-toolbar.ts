// The browser viewers' toolbar texts (`viewer_toolbar.*`, locales/viewer-toolbar/): only the viewer pages show
// them, so they stay out of the core catalogue the sign-in page loads first (its budget). Modules that show them
// import this one, which awaits them.
import { loadArea } from '..';

await loadArea('viewer-toolbar');
