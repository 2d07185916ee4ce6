import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// In development the API runs on its own port (PORT, default 8080); production serves
// the built files from the same Node process.
const api = process.env.VITE_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`;

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '/api': { target: api, ws: true },
      '/authentication': { target: api },
    },
  },
  build: {
    outDir: 'dist',
    chunkSizeWarningLimit: 900,
    rollupOptions: {
      output: {
        manualChunks(id: string) {
          if (id.includes('node_modules/@mantine') || id.includes('node_modules/@floating-ui')) return 'mantine';
          if (id.includes('node_modules/react') || id.includes('node_modules/scheduler')) return 'react';
          return undefined;
        },
      },
    },
  },
});
