// A TCP port on 127.0.0.1 that was free when tried, for a server a test
// starts itself (sshd, an agentty restarted on the same port).
import crypto from 'node:crypto';
import net from 'node:net';

// Below the kernel's ephemeral range (32768 and up by default), where the
// connections other processes open (other tests on the machine) take
// theirs: one of those could take a port from listen(0) between the pick
// and the server's bind, or between its exit and restart. Callers still
// retry if their server could not bind it.
export async function freePort() {
  for (;;) {
    const port = 20000 + crypto.randomInt(12000);
    const server = net.createServer();
    const free = await new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
}
