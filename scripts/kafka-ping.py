#!/usr/bin/env python3
"""kafka-ping: ask a Kafka broker for Metadata over plain TCP, without a Kafka client.

Sends ApiVersions (v0) to learn which Metadata versions the broker speaks, then a
Metadata request (a non-flexible version, v4..v8) for no topics, or for all topics
with --topics. Succeeds when the response lists at least one broker, with
--expect-node N when it lists node N at the address that was asked, and with
--expect-brokers N when it lists N brokers or more (every node of a cluster has joined).
--leaders adds how many of each topic's partitions each node leads (node -1: no leader).

Exit codes: 0 the broker answered and is listed; 1 no answer, a bad answer, or the
broker is not (yet) listed; 2 usage.

Wire format (all big-endian): a request is int32 size, then header v1
(int16 api_key, int16 api_version, int32 correlation_id, int16-length client_id),
then the body. Non-flexible responses start with header v0 (int32 correlation_id).
ApiVersions responses always use header v0, whatever their version.
"""

import argparse
import socket
import struct
import sys
import time

API_METADATA = 3
API_VERSIONS = 18
CLIENT_ID = b"kgap-ping"
# Metadata v9+ is "flexible" (compact arrays, tagged fields); v4..v8 are the
# classic encoding that Kafka 4.x still accepts (v0..v3 were removed in 4.0).
METADATA_CLASSIC = range(4, 9)


class BadAnswer(Exception):
    pass


class Reader:
    """Reads big-endian Kafka primitives from one response body."""

    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise BadAnswer("response ends early at byte %d" % self.pos)
        value = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value[0] if len(value) == 1 else value

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise BadAnswer("string runs past the response at byte %d" % self.pos)
        s = self.buf[self.pos:self.pos + n].decode("utf-8", "replace")
        self.pos += n
        return s

    def array(self, item):
        n = self.take(">i")
        if n < 0:
            return None
        if n > len(self.buf):
            raise BadAnswer("array length %d is larger than the response" % n)
        return [item() for _ in range(n)]


def roundtrip(sock, api_key, version, corr, body):
    header = struct.pack(">hhih", api_key, version, corr, len(CLIENT_ID)) + CLIENT_ID
    msg = header + body
    sock.sendall(struct.pack(">i", len(msg)) + msg)
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    if size < 4 or size > 64 << 20:
        raise BadAnswer("response size %d is not plausible" % size)
    resp = recv_exact(sock, size)
    got = struct.unpack_from(">i", resp)[0]
    if got != corr:
        raise BadAnswer("correlation id %d, expected %d" % (got, corr))
    return Reader(resp[4:])


def recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise BadAnswer("broker closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def api_versions(sock):
    r = roundtrip(sock, API_VERSIONS, 0, 1, b"")
    error = r.take(">h")
    apis = {k: (lo, hi) for k, lo, hi in r.array(lambda: r.take(">hhh"))}
    # Error 35 (UNSUPPORTED_VERSION) still carries the list; anything else is bad.
    if error not in (0, 35):
        raise BadAnswer("ApiVersions error code %d" % error)
    return apis


def metadata(sock, version, all_topics):
    # topics: null array (-1) asks for all topics, an empty array for none.
    # then allow_auto_topic_creation; v8+ adds include_{cluster,topic}_authorized_operations.
    body = struct.pack(">i?", -1 if all_topics else 0, False)
    if version >= 8:
        body += struct.pack(">??", False, False)
    r = roundtrip(sock, API_METADATA, version, 2, body)
    r.take(">i")  # throttle_time_ms

    def broker():
        node = r.take(">i")
        host = r.string()
        port = r.take(">i")
        r.string()  # rack
        return node, host, port

    def partition():
        error, index, leader = r.take(">hii")
        if version >= 7:
            r.take(">i")  # leader_epoch
        r.array(lambda: r.take(">i"))  # replicas
        r.array(lambda: r.take(">i"))  # isr
        r.array(lambda: r.take(">i"))  # offline replicas (v5+)
        return index, leader, error

    def topic():
        error = r.take(">h")
        name = r.string()
        internal = r.take(">?")
        parts = r.array(partition)
        if version >= 8:
            r.take(">i")  # topic_authorized_operations
        return name, error, internal, parts

    brokers = r.array(broker)
    cluster = r.string()
    controller = r.take(">i")
    topics = r.array(topic)
    return brokers, cluster, controller, topics


def parse_addr(text):
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, got %r" % text)
    return host, int(port)


def main():
    ap = argparse.ArgumentParser(
        prog="kafka-ping.py",
        description="Send a real Kafka Metadata request and check the broker answers.",
        epilog="examples:\n"
        "  kafka-ping.py                          # ask 127.0.0.1:9092\n"
        "  kafka-ping.py -b 127.0.0.1:9192 -n 1   # and require node 1 at that address\n"
        "  kafka-ping.py --topics                 # also list topics and partitions\n"
        "  kafka-ping.py -b 127.0.0.1:9700 -n 1 --expect-brokers 3   # a 3-node cluster, all joined\n"
        "  kafka-ping.py --topics --leaders       # and which node leads each partition\n"
        "  kafka-ping.py -q -t 1 && echo up       # silent check for scripts",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("-b", "--bootstrap", type=parse_addr, default=("127.0.0.1", 9092),
                    metavar="HOST:PORT", help="broker to ask (default 127.0.0.1:9092)")
    ap.add_argument("-t", "--timeout", type=float, default=2.0, metavar="SECS",
                    help="connect and read timeout (default 2)")
    ap.add_argument("-n", "--expect-node", type=int, metavar="ID",
                    help="require this node id listed at HOST:PORT")
    ap.add_argument("--expect-brokers", type=int, metavar="N",
                    help="require at least N brokers listed (all nodes of a cluster joined)")
    ap.add_argument("--topics", action="store_true", help="ask for all topics and list them")
    ap.add_argument("--leaders", action="store_true",
                    help="with --topics: partitions led by each node, as node:count (-1: none)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing; exit code only")
    args = ap.parse_args()
    if args.expect_brokers is not None and args.expect_brokers < 1:
        ap.error("--expect-brokers must be 1 or more")
    if args.leaders and not args.topics:
        ap.error("--leaders needs --topics")
    host, port = args.bootstrap
    where = "%s:%d" % (host, port)

    def fail(reason):
        if not args.quiet:
            print("kafka-ping: %s: %s" % (where, reason), file=sys.stderr)
        return 1

    start = time.perf_counter()
    try:
        with socket.create_connection((host, port), timeout=args.timeout) as sock:
            sock.settimeout(args.timeout)
            apis = api_versions(sock)
            if API_METADATA not in apis:
                return fail("broker lists no Metadata API")
            lo, hi = apis[API_METADATA]
            usable = [v for v in METADATA_CLASSIC if lo <= v <= hi]
            if not usable:
                return fail("broker speaks Metadata v%d..v%d, none of v4..v8" % (lo, hi))
            version = usable[-1]
            brokers, cluster, controller, topics = metadata(sock, version, args.topics)
    except (OSError, BadAnswer) as e:
        return fail(str(e) or e.__class__.__name__)
    ms = (time.perf_counter() - start) * 1000

    if not brokers:
        return fail("Metadata lists no broker yet")
    if args.expect_node is not None and (args.expect_node, host, port) not in brokers:
        listed = ", ".join("%d@%s:%d" % b for b in brokers)
        return fail("node %d not listed at %s (listed: %s)" % (args.expect_node, where, listed))
    if args.expect_brokers is not None and len(brokers) < args.expect_brokers:
        listed = ", ".join("%d@%s:%d" % b for b in brokers)
        return fail("%d of %d brokers listed (%s)" % (len(brokers), args.expect_brokers, listed))
    if args.quiet:
        return 0
    listed = ",".join("%d@%s:%d" % b for b in brokers)
    print("ok %s cluster=%s controller=%d brokers=%s metadata=v%d %.1fms"
          % (where, cluster, controller, listed, version, ms))
    for name, error, internal, parts in sorted(topics or [], key=lambda t: t[0] or ""):
        bad = sum(1 for p in parts if p[2] != 0) if parts else 0
        leaders = ""
        if args.leaders and parts:
            count = {}
            for _, leader, _ in parts:
                count[leader] = count.get(leader, 0) + 1
            leaders = " leaders=" + ",".join("%d:%d" % kv for kv in sorted(count.items()))
        print("  topic %s partitions=%d%s%s%s" % (
            name, len(parts or []), " internal" if internal else "",
            " error=%d" % error if error else (" partition-errors=%d" % bad if bad else ""),
            leaders))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # A reader that stopped early (status pipes the topic list through head): not an error.
        sys.stderr.close()
        sys.exit(0)
