// The browser the server tests open a viewer in: the journeys' (scripts/lib/browser.mjs), launched alike.
import { chromium, type Browser } from 'playwright';
import { testBrowserPath } from '../../../scripts/lib/browser.mjs';

export const launchTestBrowser = (): Promise<Browser> => chromium.launch({ executablePath: testBrowserPath(), args: ['--no-sandbox', '--disable-gpu'] });
