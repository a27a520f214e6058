import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import path from 'node:path';
import type { AstroIntegration } from 'astro';
import { compressTree } from './src/server/publishing/compress.ts';

// OUT_DIR lets several builds (tests, benchmarks, parallel work) live side by side. @default "dist"
const outDir = process.env.OUT_DIR ?? 'dist';

/** The post-build step of every build (npm run build, npm start, rebuild, tests): brotli and gzip twins of the static files. */
const precompress: AstroIntegration = {
  name: 'meridian-precompress',
  hooks: {
    'astro:build:done': async ({ logger }) => {
      const result = await compressTree(path.resolve(outDir, 'client'));
      const kb = (n: number) => `${Math.round(n / 1024)} KB`;
      logger.info(`compressed ${result.files} files (${kb(result.bytes)}: brotli ${kb(result.brotliBytes)}, gzip ${kb(result.gzipBytes)}) in ${(result.ms / 1000).toFixed(1)} s`);
    },
  },
};

// Reader pages opt into prerendering (`export const prerender = true`); everything else is on demand.
export default defineConfig({
  site: process.env.SITE_URL ?? 'http://localhost:4321',
  output: 'server',
  outDir,
  cacheDir: path.join(outDir, '.astro-cache'),
  adapter: node({ mode: 'middleware', bodySizeLimit: 11 * 1024 * 1024 }),
  integrations: [react(), precompress],
  trailingSlash: 'never',
  build: { format: 'directory' },
  security: {
    // Astro's own origin check covers form posts only; src/middleware.ts checks every state-changing request.
    checkOrigin: false,
    // A CSP <meta> in every page: Astro hashes the scripts and styles it emits, so no other inline
    // script runs. frame-ancestors cannot live in a <meta>: the server sends it as a header.
    csp: {
      directives: [
        "default-src 'self'",
        // Hero images of ingested articles may live on the source's host.
        "img-src 'self' data: https: http:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
      ],
    },
  },
  server: { port: Number(process.env.PORT ?? 4321), host: true },
  vite: { ssr: { external: ['sharp', '@node-rs/argon2', 'lowdb', 'feedparser', 'sanitize-html', 'pagefind'] } },
});
