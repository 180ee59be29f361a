// What a process holds, read from /proc: for the tests that check that
// agentty gives back what it took (fds, memory).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;

// Resident memory in KiB.
export const rssKb = (pid) =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);

// What each of the process's open fds points at (a path, socket:[..], ...).
export function openFdTargets(pid) {
  const fdDir = `/proc/${pid}/fd`;
  return readdirSync(fdDir).map((fd) => {
    try {
      return readlinkSync(`${fdDir}/${fd}`);
    } catch {
      return '';  // closed while listing
    }
  });
}

// Whether the process holds a terminal's master. agentty with nothing
// running holds one only for its spare terminal, made after a program ends
// (and after its answer is sent, so later than the answer on a loaded
// machine): a count of fds taken before it is there is one it never returns
// to. /dev/ptmx is a device node on a machine and a symlink to pts/ptmx in
// containers (Docker, a chroot with its own devpts).
export const holdsPtyMaster = (pid) =>
  openFdTargets(pid).some((target) => target === '/dev/ptmx' || target === '/dev/pts/ptmx');

// Whether process `pid` has ended within `ms` (polls: there is no event for
// another process's end).
export async function endsWithin(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
