import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { cataloguesPlugin } from './catalogues-plugin.ts';

export default defineConfig({
  plugins: [react(), cataloguesPlugin()],
  test: {
    name: 'web',
    root: import.meta.dirname,
    environment: 'happy-dom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
