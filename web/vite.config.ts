import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { cataloguesPlugin } from './catalogues-plugin.ts';

// In development the API runs on its own port (PORT, default 8080); production serves
// the built files from the same Node process.
const api = process.env.VITE_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`;

const TEXT = /\.(js|mjs|css|html|svg|json|txt|map)$/;

/**
 * Writes `<file>.br` and `<file>.gz` beside each text file of the build, at the highest levels
 * (once, at build time): the server sends them by Accept-Encoding (@fastify/static preCompressed).
 * A variant that would not be smaller is not written; the server then sends the file itself.
 */
function precompress(): Plugin {
  let outDir = 'dist';
  const br = promisify(brotliCompress);
  const gz = promisify(gzip);
  return {
    name: 'vdi:precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      // A build that failed wrote nothing: its error is the one to show.
      if (!existsSync(outDir)) return;
      const files = (await readdir(outDir, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && TEXT.test(e.name))
        .map((e) => join(e.parentPath, e.name));
      await Promise.all(
        files.map(async (file) => {
          const data = await readFile(file);
          const variants = await Promise.all([
            br(data, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }),
            gz(data, { level: constants.Z_BEST_COMPRESSION }),
          ]);
          await Promise.all(
            (['.br', '.gz'] as const).map((ext, i) => (variants[i]!.length < data.length ? writeFile(file + ext, variants[i]!) : undefined)),
          );
        }),
      );
    },
  };
}

/**
 * React Router's package points every import at its development build (warnings, checks), production builds too
 * (its issue 14102). A build of the portal takes its production build, which it ships beside it.
 */
const reactRouterProduction = {
  find: /^react-router$/,
  replacement: join(dirname(createRequire(import.meta.url).resolve('react-router/package.json')), 'dist', 'production', 'index.mjs'),
};

/** A package's development build in the portal's build (slower: checks and warnings for a developer) fails the build. */
function refuseDevelopmentBuilds(): Plugin {
  return {
    name: 'vdi:refuse-development-builds',
    apply: 'build',
    load(id) {
      if (/[\\/]node_modules[\\/].*([\\/]development[\\/]|\.development\.[cm]?js$)/.test(id)) {
        this.error(`a development build in the portal's build: ${id} (alias the package's production build, as react-router's)`);
      }
      return null;
    },
  };
}

export default defineConfig(({ command }) => ({
  plugins: [react(), cataloguesPlugin(), precompress(), refuseDevelopmentBuilds()],
  resolve: { alias: command === 'build' ? [reactRouterProduction] : [] },
  server: {
    proxy: {
      '/api': { target: api, ws: true },
      '/authentication': { target: api },
    },
  },
  build: {
    outDir: 'dist',
    // Screens, the calendar, the viewers and each area's texts are chunks of their own, loaded
    // when opened (lazy routes in src/app/routes.ts, catalogues in src/i18n); the first load
    // gets only what the sign-in page needs.
    chunkSizeWarningLimit: 900,
    rolldownOptions: {
      output: {
        codeSplitting: {
          // What the entry needs (React, the router, Mantine's core, i18next, zod…): one file, not dozens.
          groups: [
            { name: 'app', tags: ['$initial'] },
            // The sign-in page and what it uses (forms, selects, queries, dates), which most screens share.
            { name: 'sign-in', test: /[\\/]src[\\/]features[\\/]auth[\\/]LoginPage\.tsx$/ },
          ],
        },
      },
    },
  },
}));
