// Bundles the web UI with esbuild: src/dashboard.ts and src/terminal.ts (with
// their CSS, xterm.js included) plus static/*.html into one flat directory,
// which CMake embeds in the binary. Usage: node build.mjs [--outdir DIR]
// (default dist/).
import * as esbuild from 'esbuild';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let outdir = path.join(here, 'dist');
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--outdir') outdir = path.resolve(args[++i]);
  else if (args[i].startsWith('--outdir=')) outdir = path.resolve(args[i].slice('--outdir='.length));
  else throw new Error(`build.mjs: unknown argument ${args[i]}`);
}

await mkdir(outdir, { recursive: true });
await esbuild.build({
  absWorkingDir: here,
  entryPoints: ['src/dashboard.ts', 'src/terminal.ts', 'src/replay.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2021'],
  outdir,
  legalComments: 'eof',
  logLevel: 'warning',
});
for (const name of await readdir(path.join(here, 'static'))) {
  await copyFile(path.join(here, 'static', name), path.join(outdir, name));
}
