// The browser the tests drive: Debian's Chromium, through its headless shell when installed (Debian's package
// chromium-headless-shell: the same Blink and V8 without the full browser around them). Measured here (decision 0040):
// a sign-in page costs it a third of the CPU the full browser takes headless, a signed-in screen two thirds; on a
// 2-core machine running guests, the journeys' browsers were most of the suite's CPU. CHROMIUM_PATH chooses another.
import { existsSync } from 'node:fs';

const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
const CHROMIUM = '/usr/bin/chromium';
/** The Debian packages the tests' browser needs (the full browser too: a person compares or looks with it). */
export const TEST_BROWSER_PACKAGES = ['chromium', 'chromium-headless-shell'];

export function testBrowserPath() {
  return process.env.CHROMIUM_PATH || (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : CHROMIUM);
}
