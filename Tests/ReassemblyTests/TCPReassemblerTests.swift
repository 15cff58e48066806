import Packets
import Testing
@testable import Reassembly

/// A compact way to write segments: `seg(c2s, seq, "bytes", [.syn])`.
private let client = Endpoint(address: .v4(0x7F00_0001), port: 50_000)
private let server = Endpoint(address: .v4(0x7F00_0001), port: 1883)

private func seg(_ toServer: Bool, _ seq: UInt32, _ text: String = "", _ flags: TCPFlags = [.ack], missing: Int = 0, ack: UInt32 = 0) -> TCPSegment {
    TCPSegment(source: toServer ? client : server, destination: toServer ? server : client,
               sequence: seq, acknowledgement: ack, flags: flags, payload: Array(text.utf8)[...], missingPayload: missing)
}

/// A row of a reassembly table: segments in capture order (one a second), events out.
struct ReassemblyCase: Sendable, CustomTestStringConvertible {
    var name: String
    var segments: [TCPSegment]
    var expected: [String]
    var limits = ReassemblyLimits()
    var testDescription: String { name }
}

/// The handshake the acknowledgement cases start with: client ISN 100, server ISN 500.
private let handshake = [seg(true, 100, "", [.syn]), seg(false, 500, "", [.syn, .ack], ack: 101)]
private let opened = "open 0 client=50000"
private let closedAtEnd = [">end", "<end", "close 0 endOfCapture"]

/// What came out, flattened to comparable strings.
private func run(_ segments: [TCPSegment], limits: ReassemblyLimits = ReassemblyLimits(), flush: Bool = true,
                 secondsApart: Double = 1) -> [String] {
    var r = TCPReassembler(limits: limits, isServerPort: { $0 == 1883 })
    var events: [ReassemblyEvent] = []
    for (i, s) in segments.enumerated() { r.process(s, time: Double(i) * secondsApart, into: &events) }
    if flush { r.flushAll(into: &events) }
    return events.map { e -> String? in
        switch e {
        case .opened(let s, let c, _, let mid): return "open \(s) client=\(c.port)\(mid ? " mid" : "")"
        case .data(_, let side, let b): return "\(side == .clientToServer ? ">" : "<")\(String(decoding: b, as: UTF8.self))"
        case .gap(_, let side, let n, let reason): return "\(side == .clientToServer ? ">" : "<")gap \(n) \(reason)"
        case .overlapConflict(_, let side, let n): return "\(side == .clientToServer ? ">" : "<")conflict \(n)"
        case .ended(_, let side): return "\(side == .clientToServer ? ">" : "<")end"
        case .closed(let s, let reason): return "close \(s) \(reason)"
        case .recordedAt: return nil
        }
    }.compactMap { $0 }
}

@Suite("TCP reassembly")
struct TCPReassemblerTests {
    @Test("in-order data after a handshake passes through in order")
    func inOrder() {
        let out = run([seg(true, 100, "", [.syn]), seg(false, 500, "", [.syn, .ack]), seg(true, 101, "abc"), seg(false, 501, "xy"), seg(true, 104, "def")])
        #expect(out == ["open 0 client=50000", ">abc", "<xy", ">def", ">end", "<end", "close 0 endOfCapture"])
    }

    @Test("out-of-order segments are held and delivered when the hole fills", arguments: [
        ([0, 1, 2], ">abcdefghi"),
        ([2, 1, 0], ">abcdefghi"),
        ([1, 0, 2], ">abcdefghi"),
        ([2, 0, 1], ">abcdefghi"),
    ])
    func reorder(order: [Int], expected: String) {
        let pieces = [seg(true, 101, "abc"), seg(true, 104, "def"), seg(true, 107, "ghi")]
        let out = run([seg(true, 100, "", [.syn])] + order.map { pieces[$0] })
        let data = out.filter { $0.hasPrefix(">") && !$0.hasPrefix(">end") }.map { String($0.dropFirst()) }.joined()
        #expect(">" + data == expected)
        #expect(!out.contains { $0.contains("gap") })
    }

    @Test("retransmissions and overlaps are delivered once")
    func retransmission() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abcd"), seg(true, 101, "abcd"), seg(true, 103, "cdef"), seg(true, 107, "g")])
        #expect(out.filter { $0.hasPrefix(">") && $0 != ">end" } == [">abcd", ">ef", ">g"])
    }

    @Test("an overlap whose bytes differ is reported, first copy wins")
    func overlapConflict() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abcd"), seg(true, 103, "XYef")])
        #expect(out.contains(">conflict 2"))
        #expect(out.contains(">ef"))
    }

    @Test("a retransmission over two delivered segments: each differing byte counted once, equal ones not at all")
    func overlapAcrossSegments() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abcd"), seg(true, 105, "efgh"), seg(true, 102, "bXdeYgh")])
        #expect(out.contains(">conflict 2"), "\(out)")
        let same = run([seg(true, 100, "", [.syn]), seg(true, 101, "abcd"), seg(true, 105, "efgh"), seg(true, 102, "bcdefgh")])
        #expect(!same.contains { $0.contains("conflict") }, "\(same)")
    }

    @Test("a hole never filled becomes a gap of the right size at the end")
    func lostSegment() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abc"), seg(true, 110, "xyz")])
        #expect(out == ["open 0 client=50000", ">abc", ">gap 6 lostSegment", ">xyz", ">end", "<end", "close 0 endOfCapture"])
    }

    @Test("sequence numbers wrap around 2^32")
    func wrap() {
        let isn: UInt32 = 0xFFFF_FFFD
        let out = run([seg(true, isn, "", [.syn]), seg(true, isn &+ 4, "def"), seg(true, isn &+ 1, "abc")])
        #expect(out.filter { $0.hasPrefix(">") && $0 != ">end" } == [">abc", ">def"])
    }

    @Test("a jump of 2^31 is held, then given up as a gap, not delivered as data")
    func hugeJump() {
        let limits = ReassemblyLimits(maxBufferedBytesPerDirection: 4)
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "ab"), seg(true, 101 &+ 0x8000_0000, "zzzzzz")], limits: limits)
        #expect(out.contains { $0.hasPrefix(">gap") })
        #expect(out.contains(">ab"))
    }

    @Test("a capture that starts mid-connection is followed from its first segment")
    func midStream() {
        let out = run([seg(false, 7000, "tail"), seg(true, 3000, "req"), seg(false, 7004, "more")])
        #expect(out.prefix(4) == ["open 0 client=50000 mid", "<tail", ">req", "<more"])
    }

    @Test("a truncated packet's missing bytes are a gap, then data resumes")
    func truncated() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "ab", missing: 5), seg(true, 108, "cd")])
        #expect(out.prefix(4) == ["open 0 client=50000", ">ab", ">gap 5 truncatedPacket", ">cd"])
    }

    @Test("out-of-order bytes over the per-direction limit are given up as a gap")
    func bufferLimit() {
        let limits = ReassemblyLimits(maxBufferedBytesPerDirection: 5)
        var r = TCPReassembler(limits: limits)
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(true, 111, "abc"), time: 0, into: &events)
        #expect(r.bufferedBytes == 3)
        r.process(seg(true, 114, "def"), time: 0, into: &events)
        #expect(r.bufferedBytes == 0)
        #expect(r.droppedByLimits == 10)
    }

    @Test("FIN both ways closes; a new SYN on the same pair starts a new stream")
    func reuse() {
        let out = run([
            seg(true, 100, "", [.syn]), seg(false, 500, "", [.syn, .ack]), seg(true, 101, "one"),
            seg(true, 104, "", [.fin, .ack]), seg(false, 501, "", [.fin, .ack]), seg(true, 105, "", [.ack]),
            seg(true, 9000, "", [.syn]), seg(true, 9001, "two"),
        ])
        #expect(out.contains("close 0 fin"))
        #expect(out.contains("open 1 client=50000"))
        #expect(out.contains(">two"))
        #expect(out.filter { $0.hasPrefix("open") }.count == 2)
    }

    @Test("hundreds of interleaved connections, some reset and opened again on the same pair, each get their own bytes")
    func interleavedConnections() {
        var r = TCPReassembler(isServerPort: { $0 == 1883 })
        var events: [ReassemblyEvent] = []
        let n = 300
        func endpoint(_ i: Int) -> Endpoint { Endpoint(address: .v4(0x0A00_0000 + UInt32(i)), port: UInt16(40_000 + i)) }
        var next = [UInt32](repeating: 1000, count: n)
        var current = [Int](repeating: -1, count: n)   // client → its live stream
        var owner: [Int: Int] = [:]                     // stream → client
        var expected: [Int: String] = [:]              // stream → the bytes its client sent it
        func take() {
            for event in events {
                if case .opened(let stream, let c, _, _) = event {
                    let i = Int(c.port) - 40_000
                    owner[stream] = i
                    current[i] = stream
                }
            }
        }
        func open(_ i: Int, time: Double) {
            r.process(TCPSegment(source: endpoint(i), destination: server, sequence: next[i], acknowledgement: 0, flags: [.syn], payload: []),
                      time: time, into: &events)
            next[i] &+= 1
            take()
        }
        for i in 0..<n { open(i, time: 0) }
        var got: [Int: String] = [:]
        for round in 0..<4 {
            for i in (0..<n).reversed() {
                let text = "\(i).\(round);"
                events.removeAll()
                r.process(TCPSegment(source: endpoint(i), destination: server, sequence: next[i], acknowledgement: 0, flags: [.ack],
                                     payload: Array(text.utf8)[...]), time: Double(round + 1), into: &events)
                next[i] &+= UInt32(text.utf8.count)
                expected[current[i], default: ""] += text
                for case .data(let stream, _, let bytes) in events { got[stream, default: ""] += String(decoding: bytes, as: UTF8.self) }
            }
            // Every seventh client's connection is reset by the server and opened again on the same pair.
            for i in stride(from: round % 7, to: n, by: 7) {
                events.removeAll()
                r.process(TCPSegment(source: server, destination: endpoint(i), sequence: 0, acknowledgement: 0, flags: [.rst], payload: []),
                          time: Double(round + 1), into: &events)
                #expect(events.contains { if case .closed(current[i], .reset) = $0 { return true } else { return false } }, "client \(i)")
                next[i] = 77_000 * UInt32(round + 1)
                events.removeAll()
                open(i, time: Double(round + 1))
            }
        }
        #expect(owner.count > n + 4 * (n / 7))
        #expect(got == expected)
        #expect(got.allSatisfy { stream, text in text.split(separator: ";").allSatisfy { $0.hasPrefix("\(owner[stream]!).") } })
    }

    @Test("RST closes at once")
    func reset() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "x"), seg(false, 0, "", [.rst])], flush: false)
        #expect(out.last == "close 0 reset")
    }

    @Test("idle connections are flushed by capture time")
    func idle() {
        var r = TCPReassembler(limits: ReassemblyLimits(idleTimeout: 10))
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(true, 101, "a"), time: 1, into: &events)
        let other = TCPSegment(source: Endpoint(address: .v4(1), port: 1), destination: server, sequence: 1, acknowledgement: 0, flags: [.syn], payload: [])
        r.process(other, time: 20, into: &events)
        #expect(events.contains { if case .closed(0, .idle) = $0 { return true } else { return false } })
        #expect(r.activeConnections == 1)
    }

    @Test("the connection limit flushes the least recently active")
    func connectionLimit() {
        var r = TCPReassembler(limits: ReassemblyLimits(maxConnections: 10))
        var events: [ReassemblyEvent] = []
        for i in 0..<1000 {
            let s = TCPSegment(source: Endpoint(address: .v4(UInt32(i)), port: 40_000), destination: server, sequence: 1, acknowledgement: 0, flags: [.syn], payload: [])
            r.process(s, time: Double(i) / 1000, into: &events)
            #expect(r.activeConnections <= 10)
        }
        #expect(r.flushedConnections >= 990)
    }

    // Client bytes 101... are "abc" (101-103), a hole "def" (104-106) the capture lost, "ghi" (107-109).
    @Test("holes the other side acknowledges, and holes it does not", arguments: [
        ReassemblyCase(name: "an ACK past the hole: a gap of the hole's size at the ACK, held data delivered then",
            segments: handshake + [seg(true, 101, "abc", ack: 501), seg(true, 107, "ghi", ack: 501),
                                   seg(false, 501, "ok", ack: 110), seg(false, 503, "later", ack: 110)],
            expected: [opened, ">abc", ">gap 3 acknowledged", ">ghi", "<ok", "<later"] + closedAtEnd),
        ReassemblyCase(name: "an ACK seen before the data after the hole: the reply waits for the bytes it acknowledges",
            segments: handshake + [seg(true, 101, "abc"), seg(false, 501, "ok", ack: 110), seg(true, 107, "ghi"),
                                   seg(false, 503, "later", ack: 110)],
            expected: [opened, ">abc", ">gap 3 acknowledged", ">ghi", "<ok", "<later"] + closedAtEnd),
        ReassemblyCase(name: "an ACK exactly at the hole's start is not past it: held, then filled by a late segment",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "ok", ack: 104),
                                   seg(true, 104, "def"), seg(false, 503, "later", ack: 110)],
            expected: [opened, ">abc", "<ok", ">def", ">ghi", "<later"] + closedAtEnd),
        ReassemblyCase(name: "an ACK inside the hole: only the acknowledged part is a gap, the rest is filled late",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "ok", ack: 105),
                                   seg(true, 105, "ef"), seg(false, 503, "later", ack: 110)],
            expected: [opened, ">abc", ">gap 1 acknowledged", ">ef", ">ghi", "<ok", "<later"] + closedAtEnd),
        ReassemblyCase(name: "an acknowledgement number without the ACK flag is ignored",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "ok", [.psh], ack: 110)],
            expected: [opened, ">abc", "<ok", ">gap 3 lostSegment", ">ghi"] + closedAtEnd),
        ReassemblyCase(name: "two holes, one ACK past both: two gaps, each of its hole's size",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(true, 115, "pq"),
                                   seg(false, 501, "ok", ack: 117)],
            expected: [opened, ">abc", ">gap 3 acknowledged", ">ghi", ">gap 5 acknowledged", ">pq", "<ok"] + closedAtEnd),
        ReassemblyCase(name: "the acknowledged hole arriving after the reorder window closed adds nothing",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "ok", ack: 110),
                                   seg(true, 104, "def"), seg(true, 110, "jk")],
            expected: [opened, ">abc", ">gap 3 acknowledged", ">ghi", "<ok", ">jk"] + closedAtEnd,
            limits: ReassemblyLimits(reorderTimeout: 0.5)),
        ReassemblyCase(name: "the acknowledged hole arriving within the reorder window fills it",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "ok", ack: 110),
                                   seg(true, 104, "def"), seg(true, 110, "jk")],
            expected: [opened, ">abc", ">def", ">ghi", "<ok", ">jk"] + closedAtEnd),
        ReassemblyCase(name: "sequence numbers that wrap inside the hole",
            segments: [seg(true, 0xFFFF_FFFA, "", [.syn]), seg(false, 500, "", [.syn, .ack], ack: 0xFFFF_FFFB),
                       seg(true, 0xFFFF_FFFB, "abc"), seg(true, 0x0000_0001, "ghi"), seg(false, 501, "ok", ack: 0x0000_0004)],
            expected: [opened, ">abc", ">gap 3 acknowledged", ">ghi", "<ok"] + closedAtEnd),
        ReassemblyCase(name: "mid-stream: an ACK older than the first byte seen is no hole",
            segments: [seg(false, 7000, "tail", ack: 2000), seg(true, 3000, "req", ack: 7004), seg(true, 3010, "xyz"),
                       seg(false, 7004, "more", ack: 3003)],
            expected: ["open 0 client=50000 mid", "<tail", ">req", "<more", ">gap 7 lostSegment", ">xyz"] + closedAtEnd),
        ReassemblyCase(name: "mid-stream: an ACK past a hole after the first byte seen",
            segments: [seg(false, 7000, "tail", ack: 2000), seg(true, 3000, "req", ack: 7004), seg(true, 3010, "xyz"),
                       seg(false, 7004, "more", ack: 3013)],
            expected: ["open 0 client=50000 mid", "<tail", ">req", ">gap 7 acknowledged", ">xyz", "<more"] + closedAtEnd),
        ReassemblyCase(name: "keep-alives and window probes neither open a hole nor conflict",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 103, "\u{0}"), seg(true, 103, ""),
                                   seg(false, 501, "ok", ack: 104), seg(true, 104, "d")],
            expected: [opened, ">abc", "<ok", ">d"] + closedAtEnd),
        ReassemblyCase(name: "no ACK from the other side: the hole is given up after the hole timeout",
            segments: handshake + [seg(true, 101, "abc"), seg(true, 107, "ghi"), seg(false, 501, "", ack: 101),
                                   seg(false, 501, "", ack: 101), seg(true, 110, "jk")],
            expected: [opened, ">abc", ">gap 3 holeTimeout", ">ghi", ">jk"] + closedAtEnd,
            limits: ReassemblyLimits(holeTimeout: 2)),
    ])
    func acknowledgedHoles(_ row: ReassemblyCase) {
        #expect(run(row.segments, limits: row.limits) == row.expected)
    }

    @Test("a hole in a connection that has gone quiet is given up by capture time")
    func quietHoleTimeout() {
        var r = TCPReassembler(limits: ReassemblyLimits(holeTimeout: 5))
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(true, 101, "abc"), time: 1, into: &events)
        r.process(seg(true, 107, "ghi"), time: 2, into: &events)
        let other = Endpoint(address: .v4(9), port: 40_000)
        for t in 3...8 {
            r.process(TCPSegment(source: other, destination: server, sequence: 1, acknowledgement: 0, flags: [.syn], payload: []),
                      time: Double(t), into: &events)
            let released = events.contains { if case .gap(0, .clientToServer, 3, .holeTimeout) = $0 { return true } else { return false } }
            #expect(released == (t >= 7), "at \(t) s")
        }
        #expect(r.bufferedBytes == 0)
    }

    @Test("a hole given up in a quiet connection that releases the last FIN closes it then (fin), not later as idle")
    func quietHoleReleasesFin() {
        var r = TCPReassembler(limits: ReassemblyLimits(idleTimeout: 60, holeTimeout: 5))
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(false, 500, "", [.syn, .ack], ack: 101), time: 0, into: &events)
        r.process(seg(false, 501, "", [.fin, .ack], ack: 101), time: 1, into: &events)
        r.process(seg(true, 101, "abc"), time: 1, into: &events)
        r.process(seg(true, 107, "ghi", [.fin, .ack]), time: 2, into: &events)
        let other = Endpoint(address: .v4(9), port: 40_000)
        r.process(TCPSegment(source: other, destination: server, sequence: 1, acknowledgement: 0, flags: [.syn], payload: []),
                  time: 8, into: &events)
        #expect(events.contains { if case .closed(0, .fin) = $0 { return true } else { return false } })
        #expect(r.activeConnections == 1, "only the other connection is left")
        #expect(r.flushedConnections == 0)
    }

    @Test("the delivered-bytes windows are all released when every connection has closed, held data included")
    func deliveredWindowsReleased() {
        var r = TCPReassembler()
        var events: [ReassemblyEvent] = []
        // Two connections, each closing with data held behind a hole (delivered by the close).
        for (i, port) in [50_001, 50_002].enumerated() {
            let c = Endpoint(address: .v4(0x7F00_0001), port: UInt16(port))
            func s(_ seq: UInt32, _ text: String, _ flags: TCPFlags = [.ack]) -> TCPSegment {
                TCPSegment(source: c, destination: server, sequence: seq, acknowledgement: 0, flags: flags, payload: Array(text.utf8)[...])
            }
            r.process(s(100, "", [.syn]), time: Double(i), into: &events)
            r.process(s(101, "abc"), time: Double(i), into: &events)
            r.process(s(107, "ghi"), time: Double(i), into: &events)
        }
        #expect(r.retainedDeliveredBytes > 0)
        r.flushAll(into: &events)
        #expect(r.activeConnections == 0)
        #expect(r.retainedDeliveredBytes == 0)
    }

    @Test("a retransmission is compared with the recently delivered segments, not only the last", arguments: [
        ("an older segment, one byte changed", seg(true, 101, "abXd"), [">conflict 1"]),
        ("spanning two older segments", seg(true, 103, "cdEFgh"), [">conflict 2"]),
        ("an older segment, unchanged", seg(true, 101, "abcd"), []),
        ("a keep-alive with a garbage byte", seg(true, 112, "\u{0}"), []),
    ])
    func olderConflicts(name: String, retransmission: TCPSegment, expected: [String]) {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abcd"), seg(true, 105, "efgh"), seg(true, 109, "ijkl"), retransmission])
        #expect(out.filter { $0.contains("conflict") } == expected)
        #expect(out.filter { $0.hasPrefix(">") && $0 != ">end" } == [">abcd", ">efgh", ">ijkl"] + expected)
    }

    @Test("the window of delivered segments is bounded: a retransmission older than it is not compared")
    func windowBound() {
        let pieces = (0..<(DeliveredWindow.maxSlices + 1)).map { seg(true, 101 + UInt32($0) * 4, "abcd") }
        let out = run([seg(true, 100, "", [.syn])] + pieces + [seg(true, 101, "XXXX"), seg(true, 105, "XXXX")])
        #expect(out.filter { $0.contains("conflict") } == [">conflict 4"])
    }
}

/// Captures out of causal order: a segment recorded after the other side's ACK of it, or
/// after the reply it caused (`-i any`, multi-queue NICs, taps, merged files).
@Suite("TCP reassembly of captures out of causal order")
struct ReorderedSegmentTests {
    /// A short exchange (client ISN `c`, server ISN `s`): CONNECT, CONNACK, two publishes with a
    /// pure ACK between them, a PUBACK, the client's last bytes with its FIN, the server's FIN.
    static func exchange(client c: UInt32, server s: UInt32) -> [TCPSegment] {
        [seg(true, c, "", [.syn]), seg(false, s, "", [.syn, .ack], ack: c &+ 1), seg(true, c &+ 1, "", ack: s &+ 1),
         seg(true, c &+ 1, "CONNECT", ack: s &+ 1),
         seg(false, s &+ 1, "CONNACK", ack: c &+ 8),
         seg(true, c &+ 8, "PUB1", ack: s &+ 8),
         seg(false, s &+ 8, "", ack: c &+ 12),
         seg(true, c &+ 12, "PUB2", ack: s &+ 8),
         seg(false, s &+ 8, "PUBACK", ack: c &+ 16),
         seg(true, c &+ 16, "DISC", [.ack, .fin], ack: s &+ 14),
         seg(false, s &+ 14, "", [.ack, .fin], ack: c &+ 21),
         seg(true, c &+ 21, "", ack: s &+ 15)]
    }

    /// Every data segment (and each FIN) recorded 1, 2, … places late, up to the end.
    static let moves: [(from: Int, to: Int)] = {
        let n = exchange(client: 100, server: 500).count
        return (3..<n).flatMap { from in (from + 1..<n).map { (from, $0) } }
    }()

    @Test("a segment recorded after the ACK or the reply it caused: the events of the ordered capture",
          arguments: [(UInt32(100), UInt32(500)), (0xFFFF_FFF8, 0xFFFF_FFFC)])
    func lateSegment(isns: (UInt32, UInt32)) {
        let ordered = ReorderedSegmentTests.exchange(client: isns.0, server: isns.1)
        let expected = run(ordered, secondsApart: 0.001)
        #expect(expected.filter { $0.contains("gap") }.isEmpty)
        for (from, to) in Self.moves {
            var segments = ordered
            segments.insert(segments.remove(at: from), at: to)
            let out = run(segments, secondsApart: 0.001)
            #expect(out == expected, "segment \(from) recorded after \(to)")
        }
    }

    @Test("two segments of one direction swapped, with a retransmission of one of them: the ordered events")
    func swappedAndRetransmitted() {
        let ordered = Self.exchange(client: 100, server: 500)
        let expected = run(ordered, secondsApart: 0.001)
        // PUB1 and PUB2 swapped across the server's ACK; CONNECT recorded after its CONNACK and
        // again after PUB1; the PUBACK before both publishes.
        var segments = ordered
        segments.swapAt(5, 7)
        segments.swapAt(3, 4)
        segments.insert(segments[4], at: 6)
        segments.insert(segments.remove(at: 9), at: 5)
        let out = run(segments, secondsApart: 0.001)
        #expect(out == expected, "\(out)")
    }

    @Test("bytes acknowledged but never captured: a gap of their size once the window of packets closes",
          arguments: [1, 3, 8])
    func lostWithinPacketWindow(window: Int) {
        // PUB1 (4 bytes) never captured; the server acknowledges it and replies; PUB2 is held.
        var segments = Self.exchange(client: 100, server: 500)
        segments.remove(at: 5)
        let filler = (0..<10).map { _ in seg(false, 514, "", ack: 116) }
        segments.insert(contentsOf: filler, at: 8)
        let limits = ReassemblyLimits(reorderPackets: window)
        let out = run(segments, limits: limits, flush: false, secondsApart: 0.001)
        #expect(out.contains(">gap 4 acknowledged"), "\(out)")
        // Held back until then: the PUBACK (which acknowledges PUB2) comes after PUB2.
        let gap = out.firstIndex(of: ">gap 4 acknowledged") ?? 0
        #expect(out[gap + 1] == ">PUB2")
        #expect(out.firstIndex(of: "<PUBACK").map { $0 > gap } == true)
        #expect(out.firstIndex(of: "<CONNACK").map { $0 < gap } == true)
    }

    @Test("bytes acknowledged but never captured: a gap once the window of capture time closes, in a quiet connection too")
    func lostWithinTimeWindow() {
        var r = TCPReassembler(limits: ReassemblyLimits(reorderTimeout: 2), isServerPort: { $0 == 1883 })
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(true, 101, "abc"), time: 0.1, into: &events)
        r.process(seg(true, 107, "ghi"), time: 0.2, into: &events)
        r.process(seg(false, 501, "reply", ack: 110), time: 0.3, into: &events)
        func gapped() -> Bool { events.contains { if case .gap(0, .clientToServer, 3, .acknowledged) = $0 { true } else { false } } }
        func replied() -> Bool { events.contains { if case .data(0, .serverToClient, _) = $0 { true } else { false } } }
        #expect(!gapped() && !replied(), "waiting within the window")
        // Another connection's packets move the capture's clock on (quiet connections are
        // looked at once a second of capture time).
        let other = Endpoint(address: .v4(9), port: 40_000)
        for t in [1.0, 2.0, 3.0] {
            r.process(TCPSegment(source: other, destination: server, sequence: 1, acknowledgement: 0, flags: [.syn], payload: []),
                      time: t, into: &events)
            #expect(gapped() == (t >= 3), "at \(t) s")
            #expect(replied() == (t >= 3), "at \(t) s")
        }
        #expect(r.bufferedBytes == 0)
    }

    @Test("held-back segments without payload (FINs repeated) are bounded by the buffer limit too")
    func heldBackWithoutPayloadBounded() {
        let limit = 4096
        var r = TCPReassembler(limits: ReassemblyLimits(maxBufferedBytesPerDirection: limit, reorderPackets: 1_000_000,
                                                        reorderTimeout: 1_000_000), isServerPort: { $0 == 1883 })
        var events: [ReassemblyEvent] = []
        r.process(seg(true, 100, "", [.syn]), time: 0, into: &events)
        r.process(seg(false, 500, "", [.syn, .ack], ack: 101), time: 0, into: &events)
        var most = 0
        for _ in 0..<10_000 {
            // Each acknowledges client bytes the capture never shows.
            r.process(seg(false, 501, "", [.fin, .ack], ack: 200), time: 0, into: &events)
            most = max(most, r.bufferedBytes)
        }
        #expect(most <= limit + TCPReassembler.heldBackCost(seg(false, 501, "", [.fin, .ack])))
        #expect(events.contains { if case .ended(0, .serverToClient) = $0 { true } else { false } }, "the FIN went on")
    }

    @Test("what a held-back segment completes is marked with where it was recorded")
    func heldBackOrigin() {
        var r = TCPReassembler(isServerPort: { $0 == 1883 })
        var events: [ReassemblyEvent] = []
        func origin(_ frame: Int) -> CaptureOrigin { CaptureOrigin(frame: frame, seconds: 1000, nanoseconds: UInt32(frame)) }
        r.process(seg(true, 100, "", [.syn]), time: 0, origin: origin(1), into: &events)
        r.process(seg(false, 500, "", [.syn, .ack], ack: 101), time: 0, origin: origin(2), into: &events)
        r.process(seg(false, 501, "CONNACK", ack: 108), time: 0, origin: origin(3), into: &events)
        #expect(!events.contains { if case .data = $0 { true } else { false } }, "the reply waits")
        events.removeAll()
        r.process(seg(true, 101, "CONNECT", ack: 501), time: 0, origin: origin(4), into: &events)
        let shown = events.map { e -> String in
            switch e {
            case .data(_, let side, let b): return "\(side == .clientToServer ? ">" : "<")\(String(decoding: b, as: UTF8.self))"
            case .recordedAt(_, let o): return "at \(o.map { String($0.frame) } ?? "now")"
            default: return "other"
            }
        }
        #expect(shown == [">CONNECT", "at 3", "<CONNACK", "at now"])
    }

    @Test("an acknowledgement with nothing held and nothing arriving is no gap: later data is delivered")
    func acknowledgementAloneIsNoGap() {
        let out = run([seg(true, 100, "", [.syn]), seg(true, 101, "abc"), seg(false, 501, "", ack: 900),
                       seg(false, 501, "", ack: 900), seg(true, 104, "def")],
                      limits: ReassemblyLimits(reorderPackets: 1))
        #expect(out == [opened, ">abc", ">def"] + closedAtEnd)
    }

    @Test("what waits for the other side counts against the per-direction buffer limit")
    func heldBackWithinLimit() {
        // The client's CONNECT is late; the server's reply of 8 bytes acknowledges it. A limit
        // of 4 bytes gives the wait up: the reply goes on without it (nothing of the client's
        // is held, so nothing is a gap), and the CONNECT still comes when it arrives.
        let segments = [seg(true, 100, "", [.syn]), seg(false, 500, "", [.syn, .ack], ack: 101),
                        seg(false, 501, "CONNACK!", ack: 108), seg(true, 101, "CONNECT")]
        let out = run(segments, limits: ReassemblyLimits(maxBufferedBytesPerDirection: 4), secondsApart: 0.001)
        #expect(out == [opened, "<CONNACK!", ">CONNECT"] + closedAtEnd, "\(out)")
        let roomy = run(segments, secondsApart: 0.001)
        #expect(roomy == [opened, ">CONNECT", "<CONNACK!"] + closedAtEnd, "\(roomy)")
    }
}
