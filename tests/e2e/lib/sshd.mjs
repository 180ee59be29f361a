// A real OpenSSH sshd for the SSH end-to-end tests, set up like the C++
// fixture (tests/pty/sshd_fixture.hpp): `/usr/sbin/sshd -D -e` on 127.0.0.1
// at a free port, in a fresh temp dir holding a generated ed25519 host key,
// an authorized client key, a second (unauthorized) key, a known_hosts file
// pre-seeded with `[127.0.0.1]:PORT <host key>` and an empty ssh config (so
// the user's ~/.ssh/config is never read). Ready once sshd prints "Server
// listening on". As root it serves any account (root's own logins, and
// throwaway password users); as another user sshd can only log in that same
// user (`loginUser`), so tests of other accounts skip with `rootOnly`.
// sshdSkip() says why sshd cannot run here, or false.
// stop() kills sshd and every per-connection sshd below it, then removes
// the dir.
import { spawn, execFileSync } from 'node:child_process';
import { after, before } from 'node:test';
import {
  mkdirSync, writeFileSync, readFileSync, copyFileSync, existsSync, readdirSync, rmSync,
  appendFileSync, chmodSync,
} from 'node:fs';
import { freePort } from './free-port.mjs';
import { userInfo } from 'node:os';
import { startAgentty, tempDirForRun } from './mcp-client.mjs';

const isRoot = process.getuid?.() === 0;

// The account the tests log in as: sshd run by anyone but root logs in only
// its own user.
export const loginUser = userInfo().username;
export const loginHome = userInfo().homedir;

// The skip reason of a test that needs a second account or a root login.
export const rootOnly = isRoot ? false : 'needs root: logs in as another account or as root';

// sshd run by a user other than root gives a login its terminal with
// chown(pty, user, group tty), which the kernel allows only when the pty is
// in group tty already (/dev/pts mounted with gid=5, as standard) or the user
// is in that group. Containers often mount devpts without gid=, and then
// every terminal login fails ("chown(/dev/pts/N, ...) failed"). '' if fine.
function ptyGroupProblem() {
  if (isRoot) return '';
  const tty = readFileSync('/etc/group', 'utf8').split('\n').find((line) => line.startsWith('tty:'));
  if (!tty) return '';  // no group tty: sshd keeps the user's own group
  const ttyGid = Number(tty.split(':')[2]);
  if (process.getgroups().includes(ttyGid)) return '';
  const devpts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .filter((line) => line.split(' ')[4] === '/dev/pts').pop() ?? '';
  const options = devpts.split(' - ')[1]?.split(' ')[2] ?? '';
  if (options.split(',').includes(`gid=${ttyGid}`)) return '';
  return `sshd run by ${loginUser} cannot give a login its terminal: /dev/pts is mounted without ` +
    `gid=${ttyGid} (group tty) and ${loginUser} is not in group tty; run as root`;
}

export function sshdSkip() {
  if (!existsSync('/usr/sbin/sshd') || !existsSync('/usr/bin/ssh-keygen'))
    return 'needs /usr/sbin/sshd and ssh-keygen (openssh-server)';
  return ptyGroupProblem() || false;
}

export function sshdUsable() {
  return sshdSkip() === false;
}

function keygen(file) {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'agentty-e2e', '-f', file]);
}

// root with '!' in /etc/shadow is locked even for keys when UsePAM is off.
function ensureRootUnlocked() {
  const shadow = readFileSync('/etc/shadow', 'utf8');
  if (shadow.split('\n').some((line) => line.startsWith('root:!'))) execFileSync('usermod', ['-p', '*', 'root']);
}

// sshd's pid and every descendant whose command name is sshd (not the
// commands they run).
export function sshdTree(root) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const parent = Number(stat.slice(close + 2).split(' ')[1]);
    if (comm !== 'sshd') continue;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(Number(name));
  }
  const tree = [root];
  for (let i = 0; i < tree.length; ++i) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

function sshdConfig(dir, { passwordAuth, keyboardInteractive, usePam, maxSessions, maxStartups }) {
  const yesNo = (on) => (on ? 'yes' : 'no');
  return [
    'ListenAddress 127.0.0.1',
    `HostKey ${dir}/hostkey`,
    `PidFile ${dir}/sshd.pid`,
    `AuthorizedKeysFile ${dir}/authorized_keys`,
    `UsePAM ${yesNo(usePam)}`,
    'StrictModes no',
    'PubkeyAuthentication yes',
    `PasswordAuthentication ${yesNo(passwordAuth)}`,
    `KbdInteractiveAuthentication ${yesNo(keyboardInteractive)}`,
    `PermitRootLogin ${passwordAuth ? 'yes' : 'prohibit-password'}`,
    `MaxSessions ${maxSessions}`,
    `MaxStartups ${maxStartups}`,
    // bash sources ~/.bashrc for `bash -c CMD` run by sshd at SHLVL 0; this
    // machine's root rc runs `pyenv init` (seconds per exec). See the C++ fixture.
    'SetEnv SHLVL=1',
    // Debian's default: a login shell then carries agentty's terminal tag
    // (LC_AGENTTY_TERMINAL), so the host probe sees it before the prompt
    // hook. The C++ fixture leaves it out: the path where it is refused.
    'AcceptEnv LANG LC_*',
    '',
  ].join('\n');
}

// sshd on `port`, once it says it listens; rejects with its log if it exits.
// setpriv (util-linux) execs sshd with a parent-death signal: a test run
// that is killed takes its sshd with it instead of leaving it listening.
async function launchSshd(dir, port) {
  const sshdArgs = ['-f', `${dir}/sshd_config`, '-D', '-e', '-p', String(port)];
  const child = spawn('/usr/bin/setpriv', ['--pdeathsig', 'TERM', '/usr/sbin/sshd', ...sshdArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = { text: '' };
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start listening:\n${log.text}`)), 30000);
    child.stderr.on('data', (chunk) => {
      log.text += chunk;
      if (log.text.includes('Server listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sshd exited (${code}):\n${log.text}`));
    });
  });
  child.removeAllListeners('exit');
  return { child, log };
}

// `maxSessions`: channels sshd allows per connection (OpenSSH's default is 10);
// `maxStartups`: connections it takes at once before they have logged in.
export async function startSshd({
  passwordAuth = false, keyboardInteractive = false, usePam = false, maxSessions = 64, maxStartups = 64,
} = {}) {
  const dir = tempDirForRun('agentty-e2e-sshd-');
  chmodSync(dir, 0o755);  // sshd reads authorized_keys as the user logging in
  if (isRoot) {  // privilege separation's directory; sshd run by a user has none
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    ensureRootUnlocked();
  }
  keygen(`${dir}/hostkey`);
  keygen(`${dir}/client`);
  keygen(`${dir}/wrong`);
  copyFileSync(`${dir}/client.pub`, `${dir}/authorized_keys`);
  chmodSync(`${dir}/authorized_keys`, 0o644);
  writeFileSync(`${dir}/ssh_config`, '');
  writeFileSync(`${dir}/sshd_config`, sshdConfig(dir, { passwordAuth, keyboardInteractive, usePam, maxSessions, maxStartups }));
  const hostKey = readFileSync(`${dir}/hostkey.pub`, 'utf8');
  // freePort closes its port before sshd binds it: another process can take
  // it meanwhile, and sshd then exits. A few ports are tried.
  let started;
  for (let attempt = 1; !started; attempt++) {
    const port = await freePort();
    writeFileSync(`${dir}/known_hosts`, `[127.0.0.1]:${port} ${hostKey}`);
    try {
      started = { port, ...(await launchSshd(dir, port)) };
    } catch (error) {
      if (attempt < 5 && /Address already in use|Cannot bind/.test(error.message)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }
  const { port, child } = started;
  const log = () => started.log.text;

  const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${dir}/hostkey.pub`], { encoding: 'utf8' })
    .match(/SHA256:\S+/)[0];
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    port,
    dir,
    host: `${loginUser}@127.0.0.1:${port}`,
    clientKey: `${dir}/client`,
    wrongKey: `${dir}/wrong`,
    knownHosts: `${dir}/known_hosts`,
    sshConfig: `${dir}/ssh_config`,
    fingerprint,
    log,
    // An ssh config naming `identity` for every host, in a file of its own.
    writeConfig(identity, name = 'ssh_config') {
      const file = `${dir}/${name}`;
      writeFileSync(file, `Host *\n  IdentityFile ${identity}\n  IdentitiesOnly yes\n`);
      return file;
    },
    addKnownHost(line) { appendFileSync(`${dir}/known_hosts`, line); },
    // Signals sshd and every per-connection sshd (SIGKILL: a crash).
    signalTree(signal) {
      for (const pid of sshdTree(child.pid)) {
        try { process.kill(pid, signal); } catch { /* already gone */ }
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        for (const pid of sshdTree(child.pid)) {
          try { process.kill(pid, 'SIGKILL'); process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
        }
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// A throwaway local user with a known password (useradd + chpasswd; root
// only), for password logins and for a login shell without this machine's
// rc files (`home` is chowned to it); remove() deletes it. `suffix` tells
// apart two accounts of one test process.
// Removes an account and kills what still runs as it: a plain userdel
// refuses while the user has processes (a login shell that outlived its
// test), and runs left ~200 such accounts behind.
function removeUser(name) {
  try { execFileSync('pkill', ['-KILL', '-u', name], { stdio: 'ignore' }); } catch { /* none */ }
  try { execFileSync('userdel', ['-f', name], { stdio: 'ignore' }); } catch { /* gone */ }
}

// Accounts of earlier test processes that are gone (killed runs).
function removeStaleUsers() {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const owner = /^agtpw(\d+)[^:]*:/.exec(line);
    if (owner && !existsSync(`/proc/${owner[1]}`)) removeUser(line.slice(0, line.indexOf(':')));
  }
}

export function createPasswordUser({ home = '/tmp', shell = '/bin/bash', suffix = '' } = {}) {
  const name = `agtpw${process.pid}${suffix}`;
  const password = `Pw-${process.pid}-e2e`;
  removeStaleUsers();
  removeUser(name);  // none left over
  execFileSync('useradd', ['-M', '-d', home, '-s', shell, name]);
  execFileSync('chpasswd', { input: `${name}:${password}\n` });
  if (home !== '/tmp') execFileSync('chown', [name, home]);
  return {
    name,
    password,
    remove() {
      removeUser(name);
    },
  };
}

// The environment of an agentty that reaches `sshd` with its client key and
// nothing of the user's: `home` (no ~/.ssh keys or config), no ssh-agent,
// sshd's known_hosts and a config naming the key.
export function sshClientEnv(sshd, home) {
  return {
    HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
    AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.clientKey),
  };
}

// For a whole test file: a real sshd on 127.0.0.1 and an agentty that
// reaches it with sshd's client key and nothing of the user's (`home`, a
// fresh directory named by `prefix`, has no ~/.ssh keys or config). `skip`
// is the reason sshd cannot run here, or false; `sshd` and `agent` exist
// once the file's tests run.
export function sshdAndAgentForFile(prefix) {
  const fixture = {
    skip: sshdSkip(),
    home: tempDirForRun(prefix),
    sshd: undefined,
    agent: undefined,
  };
  before(async () => {
    if (fixture.skip) return;
    fixture.sshd = await startSshd();
    fixture.agent = await startAgentty({ env: sshClientEnv(fixture.sshd, fixture.home) });
  });
  after(async () => {
    await fixture.agent?.client.close();
    await fixture.sshd?.stop();
  });
  return fixture;
}
