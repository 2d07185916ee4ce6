export const HEADLESS_SHELL: string;
export const CHROMIUM: string;
export const TEST_BROWSER_PACKAGES: string[];
export function testBrowserPath(): string;
