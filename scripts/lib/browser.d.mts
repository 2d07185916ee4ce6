export const TEST_BROWSER_PACKAGES: string[];
export function testBrowserPath(): string;
