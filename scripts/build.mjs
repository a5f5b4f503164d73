// Builds the server (tsc + copied nodeset assets) and, when present, the dashboard.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
// From scratch: a module moved or deleted in src/ must not live on in dist/ (tests and hosts load dist/).
rmSync('dist', { recursive: true, force: true });
run('npx', ['tsc', '-p', 'tsconfig.build.json']);
run('node', ['scripts/copy-assets.mjs']);
run('node', ['scripts/bundle-vendor.mjs']);
if (existsSync('web/vite.config.ts')) run('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
