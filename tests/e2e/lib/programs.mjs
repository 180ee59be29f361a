// Small programs the end-to-end tests run under a PTY, and where the
// installed ones are.
import { execFileSync } from 'node:child_process';

// The first of `names` on PATH (its path), or undefined.
export function findProgram(...names) {
  for (const name of names) {
    try {
      return execFileSync('sh', ['-c', 'command -v "$0"', name], { encoding: 'utf8' }).trim();
    } catch { /* not installed */ }
  }
  return undefined;
}

// scripts/install-deps installs vim-tiny, which has no `vim` command (only
// vim.tiny and vi); a machine with the full vim has both.
export const vim = findProgram('vim', 'vim.tiny', 'vi');

// Prints "ready", then "winch ROWSxCOLS" on every SIGWINCH; wait for whole
// lines ("ready\n", "winch 20x70\n"). It takes the signal with sigwait, not
// a handler: a handler printing could be run again inside its own print() by
// the next SIGWINCH (Python: "reentrant call inside BufferedWriter") and die.
export const winchReporter = [
  'import os, signal',
  'signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})',
  'print("ready", flush=True)',
  'while True:',
  '    signal.sigwait({signal.SIGWINCH})',
  '    size = os.get_terminal_size()',
  '    print(f"winch {size.lines}x{size.columns}", flush=True)',
].join('\n');
