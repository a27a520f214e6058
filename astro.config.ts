import { defineConfig, fontProviders } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import path from 'node:path';
import type { AstroIntegration } from 'astro';
import { fileURLToPath } from 'node:url';
import { compressTree } from './src/server/publishing/compress.ts';
import { buildOutDir } from './src/config.ts';

// OUT_DIR lets several builds (tests, benchmarks, parallel work) live side by side, inside the project. @default "dist"
const outDir = buildOutDir(path.dirname(fileURLToPath(import.meta.url)));

/** The post-build step of every build (npm run build, npm start, rebuild, tests): brotli and gzip twins of the static files. */
const precompress: AstroIntegration = {
  name: 'meridian-precompress',
  hooks: {
    'astro:build:done': async ({ logger }) => {
      const result = await compressTree(path.resolve(outDir, 'client'));
      const kb = (n: number) => `${Math.round(n / 1024)} KB`;
      logger.info(
        `compressed ${result.files} files (${kb(result.bytes)}: brotli ${kb(result.brotliBytes)}, gzip ${kb(result.gzipBytes)}) in ${(result.ms / 1000).toFixed(1)} s`,
      );
    },
  },
};

/**
 * A self-hosted variable font (latin subset, from its Fontsource package): the same letters, and so the
 * same layout, on every machine and browser. Astro preloads it, sets font-display: swap, and derives a
 * metric-matched fallback face (size-adjust, ascent/descent overrides) so the swap does not move the page.
 */
function selfHostedFont(name: string, cssVariable: string, files: { normal: string; italic: string }, fallbacks: string[]) {
  return {
    provider: fontProviders.local(),
    name,
    cssVariable,
    fallbacks,
    display: 'swap' as const,
    options: {
      variants: [
        { src: [files.normal], weight: '100 900', style: 'normal' as const },
        { src: [files.italic], weight: '100 900', style: 'italic' as const },
      ] as [{ src: [string]; weight: string; style: 'normal' }, { src: [string]; weight: string; style: 'italic' }],
    },
  };
}

// Reader pages opt into prerendering (`export const prerender = true`); everything else is on demand.
export default defineConfig({
  site: process.env.SITE_URL ?? 'http://localhost:4321',
  output: 'server',
  outDir,
  cacheDir: path.join(outDir, '.astro-cache'),
  adapter: node({ mode: 'middleware', bodySizeLimit: 11 * 1024 * 1024 }),
  integrations: [react(), precompress],
  fonts: [
    selfHostedFont(
      'Inter',
      '--font-inter',
      {
        normal: '@fontsource-variable/inter/files/inter-latin-wght-normal.woff2',
        italic: '@fontsource-variable/inter/files/inter-latin-wght-italic.woff2',
      },
      ['Arial', 'sans-serif'],
    ),
    selfHostedFont(
      'Source Serif 4',
      '--font-source-serif',
      {
        normal: '@fontsource-variable/source-serif-4/files/source-serif-4-latin-wght-normal.woff2',
        italic: '@fontsource-variable/source-serif-4/files/source-serif-4-latin-wght-italic.woff2',
      },
      ['Georgia', 'serif'],
    ),
  ],
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
