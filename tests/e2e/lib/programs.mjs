// Small programs the end-to-end tests run under a PTY.

// Prints "ready", then "winch ROWSxCOLS" on every SIGWINCH. Wait for whole
// lines ("ready\n", "winch 20x70\n"), not `$`: a SIGWINCH can interrupt a
// print() between its text and its newline, and the handler's line then
// lands inside it.
export const winchReporter = [
  'import os, signal',
  'def report(*_):',
  '    size = os.get_terminal_size()',
  '    print(f"winch {size.lines}x{size.columns}", flush=True)',
  'signal.signal(signal.SIGWINCH, report)',
  'print("ready", flush=True)',
  'while True:',
  '    signal.pause()',
].join('\n');
