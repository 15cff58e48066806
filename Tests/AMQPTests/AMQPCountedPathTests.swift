@testable import AMQP
import Dissection
import Testing

/// The counted path of `PDUDetail.facts` (what a table run takes): frames of a connection in its
/// steady state become `CountedPDU` values, with the connection state changed as the full path
/// changes it, and any frame the full path could find a problem in goes to the full path.
@Suite("AMQP counted path")
struct AMQPCountedPathTests {
    @Test("an acknowledgement is read alone exactly where the frequent-method reader reads it, with its delivery tag and multiple bit")
    func settlementAsFrequentMethod() {
        let decoder = AMQPFrameDecoder(options: AMQPOptions())
        var read = 0, declined = 0
        for (bytes, frame, _) in AMQPTextDetailTests.mutations(seed: 0x5E77, options: AMQPOptions()) where frame.type == .method {
            let full = decoder.frequentMethod(frame.payload)
            let isSettlement = full.map { [.basicAck, .basicNack, .basicReject].contains($0.id) } ?? false
            guard let settled = AMQPFrameDecoder.settlement(frame.payload) else {
                #expect(!isSettlement, "\(bytes): the frequent-method reader reads this acknowledgement")
                if frame.payload.count == 13 { declined += 1 }
                continue
            }
            read += 1
            #expect(isSettlement, "\(bytes): read as an acknowledgement the frequent-method reader declines")
            #expect(full?.id == settled.id)
            #expect(full?.values.int("delivery-tag") == settled.deliveryTag, "\(bytes)")
            #expect((full?.values.bool("multiple") ?? false) == settled.multiple, "\(bytes)")
        }
        #expect(read > 500)
        #expect(declined > 100, "reserved bits and other methods of the same size are declined")
    }

    @Test("a publish or a delivery is read into typed arguments exactly where the frequent-method reader reads it, to the same values")
    func frequentArgumentsAsFrequentMethod() {
        let decoder = AMQPFrameDecoder(options: AMQPOptions())
        var read = 0, declined = 0
        var strings = RecentStrings()
        for (bytes, frame, _) in AMQPTextDetailTests.mutations(seed: 0xA7C5, options: AMQPOptions()) where frame.type == .method {
            let full = decoder.frequentMethod(frame.payload)
            let isContent = full.map { $0.id == .basicPublish || $0.id == .basicDeliver } ?? false
            guard let arguments = AMQPFrameDecoder.frequentArguments(frame.payload, strings: &strings) else {
                #expect(!isContent, "\(bytes): the frequent-method reader reads this publish or delivery")
                if frame.payload.count > 4, frame.payload[frame.payload.startIndex + 3] == 40 || frame.payload[frame.payload.startIndex + 3] == 60 {
                    declined += 1
                }
                continue
            }
            read += 1
            guard let full, let spec = full.spec else {
                Issue.record("\(bytes): read as a publish or delivery the frequent-method reader declines")
                continue
            }
            #expect(arguments.id == full.id)
            #expect(AMQPTextDetailTests.values(arguments.values(of: spec)) == AMQPTextDetailTests.values(full.values), "\(bytes)")
            // A message kept with typed arguments has the facts of one kept with the values.
            var typed = AMQPMessageAssembly(method: spec, arguments: arguments, previewLimit: 0)
            var listed = AMQPMessageAssembly(method: spec, values: full.values, previewLimit: 0)
            typed.bodySize = 3
            listed.bodySize = 3
            #expect(typed.facts == listed.facts, "\(bytes)")
            #expect(typed.field(options: AMQPOptions()) == listed.field(options: AMQPOptions()), "\(bytes)")
        }
        #expect(read > 500)
        #expect(declined > 100, "cut strings, reserved bits and bytes left over are declined")
    }

    /// One connection's frames, each direction in order, dissected with `detail`: into a batch
    /// (counted where the counted path takes them), and their facts and problems in order.
    struct Seen: Equatable {
        var facts: PDUFacts
        var problems: [String]
        init(_ pdu: DissectedPDU) { (facts, problems) = (pdu.summaryFacts, pdu.problems.map(\.code.rawValue)) }
        init(_ pdu: CountedPDU) { (facts, problems) = (pdu.facts, []) }
    }

    static func run(_ frames: [(Direction, [UInt8])], detail: PDUDetail) -> (seen: [Seen], counted: Int, messages: Int) {
        var options = AMQPOptions()
        options.detail = detail
        var d = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: 5672), options: options)
        var seen: [Seen] = [], counted = 0, messages = 0
        for (direction, bytes) in frames {
            var batch = PDUBatch()
            _ = d.receive(bytes[...], from: direction, into: &batch, limit: .max)
            var k = 0
            for (i, pdu) in batch.counted.enumerated() {
                while k < batch.full.count, batch.boxPlaces[k] == i {
                    seen.append(Seen(batch.full[k]))
                    k += 1
                }
                counted += 1
                if pdu.message != nil { messages += 1 }
                seen.append(Seen(pdu))
            }
            for box in batch.full[k...] { seen.append(Seen(box)) }
        }
        return (seen, counted, messages)
    }

    @Test("a consumer and a confirm-mode publisher: the frequent frames come counted, with the tree's facts; problems still come from the full path")
    func countedSameAsTree() {
        let consumer: [(Direction, [UInt8])] = [
            (.toServer, Wire.protocolHeader),
            (.toServer, Wire.method(20, 10, channel: 1, Wire.shortstr(""))),                  // channel.open
            (.toClient, Wire.method(20, 11, channel: 1, Wire.longstr(""))),                   // channel.open-ok
            (.toServer, Wire.method(85, 10, channel: 1, [0])),                                // confirm.select
            (.toServer, Wire.method(60, 20, channel: 1, Wire.u16(0) + Wire.shortstr("q") + Wire.shortstr("ctag")
                                    + [0] + Wire.table([]))),                                 // basic.consume
            (.toClient, Wire.method(60, 21, channel: 1, Wire.shortstr("ctag"))),              // basic.consume-ok
            (.toClient, Wire.method(60, 60, channel: 1, Wire.shortstr("ctag") + Wire.u64(1) + [0]
                                    + Wire.shortstr("ex") + Wire.shortstr("rk"))              // basic.deliver
                + Wire.contentHeader(channel: 1, bodySize: 5) + Wire.body(channel: 1, "he") + Wire.body(channel: 1, "llo")),
            (.toClient, Wire.method(60, 60, channel: 1, Wire.shortstr("ctag") + Wire.u64(2) + [0]
                                    + Wire.shortstr("ex") + Wire.shortstr("rk"))
                + Wire.contentHeader(channel: 1, bodySize: 0)),                                 // an empty message: the header completes it
            (.toServer, Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])),                  // basic.ack of the first
            (.toServer, Wire.method(60, 80, channel: 1, Wire.u64(9) + [0x04])),               // reserved bit: a problem
            (.toServer, Wire.method(60, 120, channel: 1, Wire.u64(2) + [3])),                 // basic.nack, multiple
            (.toServer, Wire.publish(channel: 1, exchange: "ex", routingKey: "rk")
                + Wire.contentHeader(channel: 1, bodySize: 2) + Wire.body(channel: 1, "abc")), // body overrun: a problem
            (.toServer, Wire.publish(channel: 2, exchange: "ex", routingKey: "rk")),          // channel 2 not open: a problem
            (.toServer, Wire.heartbeat),
            (.toClient, Wire.method(60, 80, channel: 1, Wire.u64(1) + [0])),                  // the broker's confirm
        ]
        let tree = Self.run(consumer, detail: .tree)
        let facts = Self.run(consumer, detail: .facts)
        #expect(tree.counted == 0)
        #expect(facts.seen.count == tree.seen.count)
        for (i, (a, b)) in zip(tree.seen, facts.seen).enumerated() {
            #expect(a == b, "PDU \(i): tree \(a.facts.kind) \(a.problems), facts \(b.facts.kind) \(b.problems)")
        }
        // basic.deliver, header, 2 bodies; deliver and header; ack, nack; publish and header; heartbeat; the confirm.
        #expect(facts.counted == 12)
        #expect(facts.messages == 2, "the last body frame and the empty message's header carry their messages")
        #expect(tree.seen.contains { $0.problems.contains("reserved-bits") })
        #expect(tree.seen.contains { $0.problems.contains("body-overrun") })
        #expect(tree.seen.contains { $0.problems.contains("channel-not-open") })
        #expect(facts.seen.contains { $0.facts.message?.routingKey == "rk" && $0.facts.message?.bodySize == 5 })
        #expect(facts.seen.contains { $0.facts.queue == "q" && $0.facts.kind == "basic.ack" })
        #expect(facts.seen.contains { $0.facts.ackedCount == 1 && $0.facts.queue == "q" && $0.facts.kind == "basic.nack" })
    }
}
