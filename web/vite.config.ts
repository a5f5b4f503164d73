// The dashboard's build: web/ → web/dist, served by the backend at `/`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npx vite --config web/vite.config.ts` against a running backend on :4000.
    proxy: { '/graphql': { target: 'http://127.0.0.1:4000', ws: true }, '/runs': 'http://127.0.0.1:4000' },
  },
});
