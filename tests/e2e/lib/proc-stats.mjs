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
