// A loopback TCP port that carries each connection on to a Unix socket, with the JDK's own Unix-domain
// channels (Java 16 and later).
//
// Inside the tournament runner's sandbox the game server is a Unix socket (KUTNAHORA_SERVER=unix:/...).
// gRPC Java reaches a Unix socket only through Netty's native epoll transport, which Debian's libnetty-java
// does not ship; the bridge lets the plain TCP transport be used everywhere. The port listens on the
// loopback interface only (inside the sandbox, the sandbox's own).
package kutnahora.bot;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

final class UnixSocketBridge {
  private UnixSocketBridge() {}

  /** Opens the bridge to the socket at {@code path}; returns the "127.0.0.1:PORT" to dial. */
  static String open(String path) throws IOException {
    UnixDomainSocketAddress socket = UnixDomainSocketAddress.of(path);
    SocketChannel.open(socket).close(); // fail now, with the reason, when the socket cannot be reached
    ServerSocketChannel listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread acceptor =
        new Thread(
            () -> {
              while (true) {
                try {
                  SocketChannel client = listener.accept();
                  try {
                    SocketChannel server = SocketChannel.open(socket);
                    pump(client, server);
                    pump(server, client);
                  } catch (IOException error) {
                    client.close();
                  }
                } catch (IOException error) {
                  return;
                }
              }
            },
            "unix-bridge");
    acceptor.setDaemon(true);
    acceptor.start();
    return "127.0.0.1:" + ((InetSocketAddress) listener.getLocalAddress()).getPort();
  }

  /** Copies {@code from} to {@code to} on a thread of its own until {@code from} ends. */
  private static void pump(SocketChannel from, SocketChannel to) {
    Thread thread =
        new Thread(
            () -> {
              ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
              try {
                while (from.read(buffer) >= 0) {
                  buffer.flip();
                  while (buffer.hasRemaining()) {
                    to.write(buffer);
                  }
                  buffer.clear();
                }
              } catch (IOException ended) {
                // the other side went away: close both below
              } finally {
                try {
                  to.shutdownOutput();
                } catch (IOException ignored) {
                  // already closed
                }
              }
            },
            "unix-bridge-pump");
    thread.setDaemon(true);
    thread.start();
  }
}
