import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { cataloguesPlugin } from './catalogues-plugin.ts';
import { scaled, testSlowdown } from '../scripts/lib/slowdown.mjs';

testSlowdown();

export default defineConfig({
  plugins: [react(), cataloguesPlugin()],
  test: {
    name: 'web',
    root: import.meta.dirname,
    environment: 'happy-dom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    // A quiet machine's bounds times its measured slowdown (Vitest's 10 s for a hook took down
    // the catalogue tests at a load of 20: loading every catalogue took longer).
    testTimeout: scaled(15_000),
    hookTimeout: scaled(30_000),
  },
});
