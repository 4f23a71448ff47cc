#!/usr/bin/env python3
"""Which datagrams a shaped link lets through first (netns_cluster_test's
hot-path band test). Run in the receiving host's namespace:

    band_order.py SENDER_NAMESPACE RECEIVER_ADDRESS MARK

Binds RECEIVER_ADDRESS:9, then has SENDER_NAMESPACE send 300 unmarked
datagrams of 1,400 bytes (its send buffer forced large, so that all of them
wait in the link's queue at once) followed by 20 with IP TOS MARK, and
prints how many arrived and the position of the first marked one among
them (-1: none).
"""
import socket
import subprocess
import sys

SENDER = """
import socket, sys
address, mark = sys.argv[1], int(sys.argv[2])
plain = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
plain.setsockopt(socket.SOL_SOCKET, 32, 1 << 22)  # SO_SNDBUFFORCE
marked = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
marked.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, mark)
for _ in range(300):
    plain.sendto(b"c" * 1400, (address, 9))
for _ in range(20):
    marked.sendto(b"h" * 1400, (address, 9))
"""


def main():
    namespace, address, mark = sys.argv[1], sys.argv[2], sys.argv[3]
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.setsockopt(socket.SOL_SOCKET, 33, 1 << 22)  # SO_RCVBUFFORCE
    receiver.bind((address, 9))
    receiver.settimeout(2)
    sender = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, "-c", SENDER,
                               address, mark])
    seen = []
    try:
        while True:
            seen.append(receiver.recv(2000)[:1])
    except OSError:
        pass
    status = sender.wait()
    if status != 0:
        sys.exit(f"band_order.py: the sender exited with {status}")
    print(len(seen), seen.index(b"h") if b"h" in seen else -1)


if __name__ == "__main__":
    main()
