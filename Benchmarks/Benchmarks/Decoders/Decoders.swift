import AMQP
import AMQPViews
import Benchmark
import Capture
import Dissection
import MQTT
import MQTTViews
import Packets
import Reassembly

// Microbenchmarks of the hot path, one PDU or one segment per scaled iteration, so that the
// reported time and allocations are per PDU (per segment for the reassembler and link layers).
//   cd Benchmarks && swift package benchmark
// Whole-capture timings against tshark and tcpdump are in scripts/bench.sh.

/// An MQTT 3.1.1 PUBLISH, QoS 1, with a text payload of `size` bytes.
func mqttPublish(topic: String, id: UInt16, size: Int) -> [UInt8] {
    let payload = Array(String(repeating: "temperature=21.5;", count: size / 17 + 1).utf8.prefix(size))
    var body: [UInt8] = [UInt8(topic.utf8.count >> 8), UInt8(topic.utf8.count & 0xFF)] + Array(topic.utf8)
    body += [UInt8(id >> 8), UInt8(id & 0xFF)] + payload
    var header: [UInt8] = [0x32]
    var n = body.count
    repeat {
        var byte = UInt8(n % 128)
        n /= 128
        if n > 0 { byte |= 0x80 }
        header.append(byte)
    } while n > 0
    return header + body
}

/// An AMQP basic.publish, its content header (content-type, delivery-mode, headers) and one body frame.
func amqpPublish(routingKey: String, size: Int) -> [UInt8] {
    func frame(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let n = payload.count
        return [type, 0, 1, UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload + [0xCE]
    }
    func shortString(_ s: String) -> [UInt8] { [UInt8(s.utf8.count)] + Array(s.utf8) }
    // basic.publish (60, 40): reserved-1, exchange, routing-key, mandatory/immediate bits.
    let method: [UInt8] = [0, 60, 0, 40, 0, 0] + shortString("orders") + shortString(routingKey) + [0]
    // Content header: class 60, weight 0, body size, flags: content-type (bit 15), headers (13), delivery-mode (12).
    let headers: [UInt8] = shortString("seq") + [UInt8(ascii: "I"), 0, 0, 0, 7]
    var header: [UInt8] = [0, 60, 0, 0] + withUnsafeBytes(of: UInt64(size).bigEndian, Array.init) + [0xB0, 0x00]
    header += shortString("text/plain")
    header += withUnsafeBytes(of: UInt32(headers.count).bigEndian, Array.init) + headers
    header += [2]
    let body = Array(String(repeating: "order 42 shipped;", count: size / 17 + 1).utf8.prefix(size))
    return frame(1, method) + frame(2, header) + frame(3, body)
}

/// Feeds a client's stream to a dissector in 1460-byte segments, as a capture would.
func feedInSegments<D: StreamDissector>(_ dissector: inout D, _ stream: [UInt8]) {
    var out: [DissectedPDU] = []
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + 1460)
        dissector.receive(stream[offset..<end], from: .toServer, into: &out)
        blackHole(out)
        out.removeAll(keepingCapacity: true)
        offset = end
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
                                           scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 50)

    let publishes = (0..<1000).map { mqttPublish(topic: "sensors/room\($0 % 16)/temp", id: UInt16($0 + 1), size: 20 + $0 % 400) }
    let mqttStream = publishes.flatMap { $0 }

    Benchmark("MQTT decode one PUBLISH") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(MQTTDecoder.decode(publishes[i % publishes.count], version: .v3_1_1))
        }
    }

    Benchmark("MQTT frame and decode a stream, per PUBLISH (1460-byte segments)") { benchmark in
        // One scaled iteration = one PUBLISH: 1000 of them per pass over the stream.
        for _ in 0..<(benchmark.scaledIterations.count / 1000) {
            var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883),
                                                    options: MQTTOptions(assumedVersion: .v3_1_1))
            feedInSegments(&dissector, mqttStream)
        }
    }

    // The detail each output format runs with: the frequent PDUs' trees written as text or JSON
    // straight from the bytes (`PDUDetail.text`, `.json`), or only their facts (tables).
    for (name, detail) in [("text", PDUDetail.text), ("json", PDUDetail.json), ("facts", PDUDetail.facts)] {
        Benchmark("MQTT frame and decode a stream with detail \(name), per PUBLISH") { benchmark in
            var options = MQTTOptions(assumedVersion: .v3_1_1)
            options.detail = detail
            for _ in 0..<(benchmark.scaledIterations.count / 1000) {
                var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 1883), options: options)
                feedInSegments(&dissector, mqttStream)
            }
        }
    }

    let amqpMessages = (0..<1000).map { amqpPublish(routingKey: "eu.orders.\($0 % 8)", size: 30 + $0 % 900) }
    // The protocol header, channel.open on channel 1 (reserved-1: an empty short string), then
    // the messages: a clean stream, so the timings are those of the hot path, not of problems.
    let channelOpen: [UInt8] = [1, 0, 1, 0, 0, 0, 5, 0, 20, 0, 10, 0, 0xCE]
    let amqpStream = Array("AMQP".utf8) + [0, 0, 9, 1] + channelOpen + amqpMessages.flatMap { $0 }
    do {
        var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672))
        var out: [DissectedPDU] = []
        dissector.receive(amqpStream[...], from: .toServer, into: &out)
        precondition(out.count == 2 + 3 * amqpMessages.count && out.allSatisfy { $0.problems.isEmpty },
                     "the AMQP benchmark stream must decode without problems")
    }

    Benchmark("AMQP frame and decode a stream, per message (method + header + body)") { benchmark in
        for _ in 0..<(benchmark.scaledIterations.count / 1000) {
            var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672))
            feedInSegments(&dissector, amqpStream)
        }
    }

    for (name, detail) in [("text", PDUDetail.text), ("json", PDUDetail.json), ("facts", PDUDetail.facts)] {
        Benchmark("AMQP frame and decode a stream with detail \(name), per message") { benchmark in
            var options = AMQPOptions()
            options.detail = detail
            for _ in 0..<(benchmark.scaledIterations.count / 1000) {
                var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: options)
                feedInSegments(&dissector, amqpStream)
            }
        }
    }

    let client = Endpoint(address: .v4(0x7F00_0001), port: 50_000)
    let server = Endpoint(address: .v4(0x7F00_0001), port: 1883)
    let chunk = Array(mqttStream.prefix(1460))

    /// A reassembler that has seen the client's SYN, and the next sequence number.
    func opened(_ client: Endpoint, _ server: Endpoint) -> (TCPReassembler, UInt32) {
        var reassembler = TCPReassembler(isServerPort: { $0 == 1883 })
        var events: [ReassemblyEvent] = []
        reassembler.process(TCPSegment(source: client, destination: server, sequence: 1000, acknowledgement: 0, flags: [.syn], payload: []),
                            time: 0, into: &events)
        return (reassembler, 1001)
    }

    Benchmark("TCP reassembly, per in-order segment") { benchmark in
        var (reassembler, seq) = opened(client, server)
        var events: [ReassemblyEvent] = []
        for i in benchmark.scaledIterations {
            reassembler.process(TCPSegment(source: client, destination: server, sequence: seq, acknowledgement: 1,
                                           flags: [.ack, .psh], payload: chunk[...]), time: Double(i) * 1e-6, into: &events)
            seq &+= UInt32(chunk.count)
            blackHole(events)
            events.removeAll(keepingCapacity: true)
        }
    }

    Benchmark("TCP reassembly, per segment, pairs swapped (out of order)") { benchmark in
        var (reassembler, seq) = opened(client, server)
        var events: [ReassemblyEvent] = []
        let n = UInt32(chunk.count)
        for i in stride(from: 0, to: benchmark.scaledIterations.count, by: 2) {
            for s in [seq &+ n, seq] {
                reassembler.process(TCPSegment(source: client, destination: server, sequence: s, acknowledgement: 1,
                                               flags: [.ack, .psh], payload: chunk[...]), time: Double(i) * 1e-6, into: &events)
            }
            seq &+= 2 * n
            blackHole(events)
            events.removeAll(keepingCapacity: true)
        }
    }

    // Link, IP and TCP layers of a real capture's records.
    let records: [CapturedPacket] = {
        guard var reader = try? CaptureFileReader(path: "../samples/mqtt-burst.pcap") else { return [] }
        var all: [CapturedPacket] = []
        while let p = try? reader.next() { all.append(p) }
        return all
    }()

    Benchmark("Link/IP/TCP decode, per packet (samples/mqtt-burst.pcap)") { benchmark in
        guard !records.isEmpty else { return }
        for i in benchmark.scaledIterations {
            let p = records[i % records.count]
            blackHole(PacketDecoder.decode(linkType: LinkType(rawValue: p.linkType), bytes: p.bytes[...]))
        }
    }
}
