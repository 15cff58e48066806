@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

/// What a unit is, reduced to compare runs fed differently.
private func describe(_ unit: AMQPFramedUnit) -> String {
    switch unit {
    case .protocolHeader(let bytes, let problems):
        return "header \(Array(bytes)) \(problems.map(\.code.rawValue))"
    case .frame(let framed):
        let f = framed.frame, problems = framed.problems
        return "frame \(f.type.rawValue) ch\(f.channel) size\(f.size) \(Array(f.payload)) end\(f.frameEnd.map(String.init) ?? "-") \(problems.map(\.code.rawValue))"
    case .unframed(let count, let problems):
        return "unframed \(count) \(problems.map(\.code.rawValue))"
    }
}

private func frame(_ chunks: [ArraySlice<UInt8>], atStart: Bool = true, options: AMQPOptions = AMQPOptions()) -> [String] {
    var framer = AMQPFramer(options: options, atStreamStart: atStart)
    var out: [String] = []
    for chunk in chunks {
        framer.append(chunk)
        while case .unit(let u) = framer.next() { out.append(describe(u)) }
    }
    out += framer.finish().map(describe)
    return out
}

/// A client's stream: header, connection.tune-ok, basic.publish + content header + body, heartbeat.
private let clientStream: [UInt8] =
    Wire.protocolHeader
    + [0x01,                   // method frame
       0x00, 0x00,             // channel 0
       0x00, 0x00, 0x00, 0x0C, // size 12
       0x00, 0x0A, 0x00, 0x1F, // connection.tune-ok (10, 31)
       0x07, 0xFF,             // channel-max 2047
       0x00, 0x02, 0x00, 0x00, // frame-max 131072
       0x00, 0x3C,             // heartbeat 60
       0xCE]                   // frame-end
    + Wire.publish(channel: 1, exchange: "Mobile_Alarm", routingKey: "5", mandatory: true)
    + Wire.contentHeader(channel: 1, bodySize: 12)
    + Wire.body(channel: 1, "hello world!")
    + Wire.heartbeat

@Suite("AMQP framer")
struct AMQPFramerTests {
    @Test("whole, byte by byte and split at every offset give the same units")
    func feedingIndependence() {
        let whole = frame([clientStream[...]])
        #expect(whole.count == 6)
        #expect(whole.first?.hasPrefix("header") == true)
        let byByte = frame(clientStream.indices.map { clientStream[$0...$0] })
        #expect(byByte == whole)
        for split in 1..<clientStream.count {
            let two = frame([clientStream[..<split], clientStream[split...]])
            #expect(two == whole, "split at \(split)")
        }
    }

    @Test("every proper prefix of a unit is need-more, never a wrong unit")
    func prefixes() {
        let units: [[UInt8]] = [Wire.protocolHeader, Wire.publish(channel: 1, exchange: "x", routingKey: "y"), Wire.heartbeat]
        for bytes in units {
            for n in 0..<bytes.count {
                var framer = AMQPFramer(atStreamStart: true)
                framer.append(bytes[..<n])
                guard case .needMore = framer.next() else {
                    Issue.record("prefix of \(n) of \(bytes.count) bytes gave a unit")
                    continue
                }
            }
            var framer = AMQPFramer(atStreamStart: true)
            framer.append(bytes[...])
            guard case .unit = framer.next() else {
                Issue.record("whole unit of \(bytes.count) bytes gave need-more")
                continue
            }
        }
    }

    @Test("the protocol header is only taken at the start of a stream")
    func headerOnlyAtStart() {
        let units = frame([clientStream[...]], atStart: true)
        #expect(units[0] == "header \(Wire.protocolHeader) []")
        // Mid-stream, "AMQP..." is not a frame: the framer skips it to the first plausible frame.
        let mid = frame([clientStream[...]], atStart: false)
        #expect(mid.count == 5)
        #expect(mid[0].contains("resync-skipped"))
    }

    @Test("a frame larger than the hold limit keeps its prefix, counts the rest, and stays in sync")
    func oversizedFrame() {
        let big = String(repeating: "x", count: 5000)
        let bytes = Wire.body(channel: 1, big) + Wire.heartbeat
        var framer = AMQPFramer(options: AMQPOptions(maxHeldFrameBytes: 1000), atStreamStart: true)
        var units: [AMQPFramedUnit] = []
        // Fed in small pieces, so the framer never holds the whole frame.
        var i = 0
        while i < bytes.count {
            framer.append(bytes[i..<min(i + 300, bytes.count)])
            while case .unit(let u) = framer.next() { units.append(u) }
            i += 300
        }
        guard units.count == 2, case .frame(let framed) = units[0], case let f = framed.frame, case let problems = framed.problems else {
            Issue.record("expected 2 units, got \(units.map(describe))")
            return
        }
        #expect(f.size == 5000)
        #expect(f.payload.count == 1000 - 7)
        #expect(f.payloadNotHeld == 5000 - (1000 - 7))
        #expect(f.frameEnd == 0xCE)
        #expect(problems.map(\.code.rawValue) == ["frame-not-held"])
        let pdu = AMQPDecoder.decode(units[0])
        #expect(pdu.value("body_length") == .int(5000))
        #expect(pdu.value("body") == .text(preview: String(repeating: "x", count: 256), length: 5000))
        #expect(describe(units[1]).hasPrefix("frame 8 ch0 size0"))
    }

    @Test("a gap inside a frame of known size gives it truncated and keeps sync")
    func gapInsideFrame() {
        let body = Wire.body(channel: 1, "0123456789")
        var framer = AMQPFramer(atStreamStart: true)
        framer.append(body[..<10])            // header + 3 payload bytes
        #expect({ if case .needMore = framer.next() { return true } else { return false } }())
        var units = framer.gap(4)             // payload bytes 3..<7 lost
        #expect(units.isEmpty)
        framer.append(body[14...] + Wire.heartbeat[...])
        while case .unit(let u) = framer.next() { units.append(u) }
        guard units.count == 2, case .frame(let framed) = units[0], case let f = framed.frame, case let problems = framed.problems else {
            Issue.record("got \(units.map(describe))")
            return
        }
        #expect(Array(f.payload) == Array("012".utf8))
        #expect(f.payloadLost == 4)
        #expect(f.payloadNotHeld == 3)
        #expect(f.frameEnd == 0xCE)
        #expect(problems.contains { $0.code == "capture-gap" })
        #expect(describe(units[1]) == "frame 8 ch0 size0 [] end206 []")
    }

    @Test("a gap that ends exactly at a frame's end stays in sync; one that runs past resynchronises")
    func gapAcrossFrameEnd() {
        let body = Wire.body(channel: 1, "0123456789")
        var exact = AMQPFramer(atStreamStart: true)
        exact.append(body[..<10])
        _ = exact.next()
        let cut = exact.gap(body.count - 10)
        #expect(cut.count == 1)
        #expect(exact.isInSync)

        var past = AMQPFramer(atStreamStart: true)
        past.append(body[..<10])
        _ = past.next()
        #expect(past.gap(body.count - 10 + 5).count == 1)
        #expect(!past.isInSync)
        past.append(Wire.heartbeat[...] + Wire.heartbeat[...])
        guard case .unit(let u) = past.next() else {
            Issue.record("no frame after the gap")
            return
        }
        #expect(u.problems.contains { $0.code == "capture-gap" })
    }

    @Test("a wrong frame-end is reported and the framer resynchronises on the next frame")
    func badFrameEnd() {
        let bad = Wire.frame(3, channel: 1, Array("abc".utf8), end: 0x00)
        let stream = Wire.heartbeat + bad + [0xDE, 0xAD] + Wire.publish(channel: 1, exchange: "", routingKey: "q")
        let pdus = dissect(stream, midStream: true)
        #expect(pdus.count == 3)
        #expect(pdus[1].has("bad-frame-end"))
        #expect(pdus[1].problems.first { $0.code == "bad-frame-end" }?.range == 10..<11)
        #expect(pdus[2].summary == "basic.publish routing-key=q")
        let skip = pdus[2].problems.first { $0.code == "resync-skipped" }
        #expect(skip?.message.contains("skipped 2 bytes") == true)
    }

    @Test("mid-stream, the framer skips to the first plausible frame and counts what it skipped")
    func midStreamResync() {
        // The tail of a body frame, then whole frames.
        let tail: [UInt8] = Array("rld!".utf8) + [0xCE]
        let stream = tail + Wire.publish(channel: 1, exchange: "ex", routingKey: "rk")
            + Wire.contentHeader(channel: 1, bodySize: 2) + Wire.body(channel: 1, "hi")
        for chunking in [stream.count, 1, 3] {
            var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: true, serverPort: 5672), options: AMQPOptions())
            var out: [DissectedPDU] = []
            var i = 0
            while i < stream.count {
                d.receive(stream[i..<min(i + chunking, stream.count)], from: .toServer, into: &out)
                i += chunking
            }
            d.finish(.toServer, into: &out)
            #expect(out.map(\.summary) == ["basic.publish exchange=ex routing-key=rk",
                                           "content header basic body-size=2",
                                           "body 2 bytes \"hi\""], "chunks of \(chunking)")
            #expect(out.first?.problems.first { $0.code == "resync-skipped" }?.message.contains("skipped 5 bytes") == true)
            #expect(out.last?.value("message.body") == .text(preview: "hi", length: 2))
        }
    }

    @Test("AMQP 1.0 and its SASL layer are named and not dissected further", arguments: [
        ([UInt8]([0x41, 0x4D, 0x51, 0x50, 0, 1, 0, 0]), "AMQP 1.0"),
        ([UInt8]([0x41, 0x4D, 0x51, 0x50, 3, 1, 0, 0]), "AMQP 1.0 SASL"),
    ])
    func amqp10(header: [UInt8], name: String) {
        let pdus = dissect(header + [0, 0, 0, 0x20, 2, 1, 0, 0] + Array(repeating: 0x41, count: 24))
        #expect(pdus.count == 2)
        #expect(pdus[0].summary == "protocol header \(name) (AMQP 1.0, not dissected)")
        #expect(pdus[0].has("amqp-1.0"))
        #expect(pdus[1].value("length") == .int(32))
        #expect(pdus[1].has("not-dissected"))
    }

    @Test("a server header that echoes the client's is no refusal; a different one is", arguments: [
        // (client's octets, server's octets, refused)
        ([UInt8]([0, 1, 0, 0]), [UInt8]([0, 1, 0, 0]), false),  // AMQP 1.0: the server echoes (§2.2)
        ([UInt8]([3, 1, 0, 0]), [UInt8]([3, 1, 0, 0]), false),  // AMQP 1.0 SASL: echoed too
        ([UInt8]([0, 0, 9, 1]), [UInt8]([0, 1, 0, 0]), true),   // 0-9-1 asked, a 1.0-only server answers
    ])
    func serverHeaderAgainstClient(client: [UInt8], server: [UInt8], refused: Bool) {
        let magic: [UInt8] = [0x41, 0x4D, 0x51, 0x50]
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672))
        var out: [DissectedPDU] = []
        d.receive((magic + client)[...], from: .toServer, into: &out)
        d.receive((magic + server)[...], from: .toClient, into: &out)
        #expect(out.count == 2)
        #expect(out[0].has("version-refused") == false)
        #expect(out[1].has("version-refused") == refused)
        #expect(out[1].summary.contains("refuses") == refused)
    }

    @Test("a server's protocol header with no client header before it is reported as refusing the client's version")
    func versionRefused() {
        let pdus = dissect(Wire.protocolHeader, from: .toClient)
        #expect(pdus.count == 1)
        #expect(pdus[0].summary == "protocol header AMQP 0-9-1 (server refuses the client's protocol version)")
        #expect(pdus[0].has("version-refused"))
        #expect(pdus[0].fields.first?.value == .string("protocol_header"))
    }

    @Test("older 0-x headers are named", arguments: [
        ([UInt8](arrayLiteral: 1, 1, 8, 0), "AMQP 0-8"),
        ([UInt8](arrayLiteral: 1, 1, 0, 9), "AMQP 0-9"),
        ([UInt8](arrayLiteral: 1, 1, 0, 10), "AMQP 0-10"),
        ([UInt8](arrayLiteral: 0, 0, 9, 1), "AMQP 0-9-1"),
    ])
    func olderHeaders(octets: [UInt8], name: String) {
        let header = AMQPProtocolHeader([0x41, 0x4D, 0x51, 0x50] + octets[...])
        #expect(header?.versionName == name)
    }

    @Test("a gap with nothing after it adds no unit: the reassembler reports gaps itself")
    func trailingGapAlone() {
        var framer = AMQPFramer(atStreamStart: true)
        framer.append(Wire.heartbeat[...])
        guard case .unit = framer.next() else {
            Issue.record("heartbeat not framed")
            return
        }
        #expect(framer.gap(100).isEmpty)
        #expect(framer.finish().isEmpty)
    }

    @Test("a gap outside a frame is said on the next frame found, with the bytes lost")
    func gapBetweenFrames() {
        var framer = AMQPFramer(atStreamStart: true)
        framer.append(Wire.heartbeat[..<3])   // a frame's first bytes, then the rest lost
        _ = framer.next()
        #expect(framer.gap(100).isEmpty)
        framer.append(Wire.heartbeat[...])
        var messages: [String] = []
        while case .unit(let unit) = framer.next() {
            if case .frame(let framed) = unit { messages += framed.problems.map(\.message) }
        }
        #expect(messages.contains("the capture lost 100 bytes of this direction here"), "\(messages)")
    }

    @Test("the stream ending inside a frame gives it truncated")
    func finishInsideFrame() {
        let body = Wire.body(channel: 1, "hello")
        var framer = AMQPFramer(atStreamStart: true)
        framer.append(body[..<9])
        _ = framer.next()
        let units = framer.finish()
        guard units.count == 1, case .frame(let framed) = units[0], case let f = framed.frame, case let problems = framed.problems else {
            Issue.record("got \(units.map(describe))")
            return
        }
        #expect(Array(f.payload) == Array("he".utf8))
        #expect(f.frameEnd == nil)
        #expect(problems.contains { $0.code == "truncated" })
    }
}
