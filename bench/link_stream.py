#!/usr/bin/env python3
"""One TCP stream between two nodes of a `scalebench cluster`: the link's delivered rate.

  receiver:  ip netns exec sb-NAME-node1 python3 bench/link_stream.py recv [PORT]
  sender:    ip netns exec sb-NAME-node2 python3 bench/link_stream.py send ADDRESS MIB [PORT]

The receiver prints the payload bytes, the seconds from the first byte to the end, and the rate
in MB/s and Mbit/s. TCP over 1500-byte frames carries at most 1448 payload bytes per 1514 on the
wire (about 95.6% of a shaped rate; tc counts the Ethernet header)."""
import socket
import sys
import time


def receive(port):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    connection, _ = server.accept()
    total, start = 0, None
    while True:
        data = connection.recv(1 << 20)
        if not data:
            break
        if start is None:
            start = time.perf_counter()
        total += len(data)
    seconds = time.perf_counter() - start
    print(f"received {total} bytes in {seconds:.3f} s: {total / seconds / 1e6:.2f} MB/s "
          f"({total * 8 / seconds / 1e6:.1f} Mbit/s)")


def send(address, mib, port):
    connection = socket.create_connection((address, port))
    chunk = b"x" * (1 << 20)
    for _ in range(mib):
        connection.sendall(chunk)
    connection.close()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "recv":
        receive(int(sys.argv[2]) if len(sys.argv) > 2 else 5001)
    elif len(sys.argv) >= 4 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 5001)
    else:
        sys.exit(__doc__)
