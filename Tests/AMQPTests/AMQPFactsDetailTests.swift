@testable import AMQP
import Dissection
import Testing

/// The fast path of `PDUDetail.facts` reads frequent frames for their facts alone: it must vouch
/// only for frames the full decoder finds nothing wrong with, and hand the connection the
/// method values, header class and body size the full decoder hands it.
@Suite("AMQP facts detail")
struct AMQPFactsDetailTests {
    @Test("fixtures and thousands of mutations: vouched-for frames decode cleanly, with the full decoder's facts and state")
    func sameAsTree() {
        let options = AMQPOptions()
        let decoder = AMQPFrameDecoder(options: options)
        var vouched = 0, declined = 0, headers = 0
        // One connection's recent short strings across all the frames, as a dissector keeps them.
        var strings = RecentStrings()
        for (bytes, frame, full) in AMQPTextDetailTests.mutations(seed: 0xFAC7, options: options) {
            let kept = decoder.decodeFacts(frame, strings: &strings)
            var fresh = RecentStrings()
            guard let fast = decoder.decodeFacts(frame, strings: &fresh) else {
                declined += 1
                #expect(kept == nil)
                continue
            }
            #expect(AMQPTextDetailTests.values(kept?.method?.values ?? AMQPArgumentValues())
                    == AMQPTextDetailTests.values(fast.method?.values ?? AMQPArgumentValues()), "\(bytes)")
            vouched += 1
            #expect(full.pdu.problems.isEmpty, "\(bytes): \(full.pdu.problems.map(\.code.rawValue))")
            #expect(fast.pdu.fields.isEmpty)
            #expect(fast.pdu.facts == PDUFacts(deriving: full.pdu), "\(bytes)")
            #expect(fast.method?.id == full.method?.id)
            #expect(AMQPTextDetailTests.values(fast.method?.values ?? AMQPArgumentValues())
                    == AMQPTextDetailTests.values(full.method?.values ?? AMQPArgumentValues()), "\(bytes)")
            #expect(fast.header?.classID == full.header?.classID)
            #expect(fast.header?.bodySize == full.header?.bodySize, "\(bytes)")
            if fast.header != nil { headers += 1 }
        }
        #expect(vouched > 1000)
        #expect(declined > 1000)
        #expect(headers > 500)
    }

    @Test("short strings taken from the recent ones are those the bytes make: escaped, printable like an escape, UTF-8, empty, repeated")
    func recentShortStrings() {
        let decoder = AMQPFrameDecoder(options: AMQPOptions())
        var strings = RecentStrings()
        // basic.deliver: consumer-tag, delivery-tag, redelivered, exchange, routing-key.
        func deliver(_ tag: [UInt8], _ exchange: [UInt8], _ key: [UInt8]) -> [UInt8] {
            [0, 60, 0, 60, UInt8(tag.count)] + tag + [0, 0, 0, 0, 0, 0, 0, 7, 0]
                + [UInt8(exchange.count)] + exchange + [UInt8(key.count)] + key
        }
        let texts: [[UInt8]] = [
            [0x01] + Array("tag".utf8),              // not text: escaped
            Array("\\x01tag".utf8),                // printable, the escape's very bytes
            Array("ctag-\u{E9}t\u{E9}".utf8),     // UTF-8
            [], Array("amq.ctag-0123456789abcdef0123456789".utf8),
            [0xFF, 0xFE], Array("\\xff\\xfe".utf8),
        ]
        for round in 0..<3 {
            for (i, tag) in texts.enumerated() {
                let exchange = texts[(i + round) % texts.count], key = texts[(i + 2 * round + 1) % texts.count]
                let payload = deliver(tag, exchange, key)[...]
                guard let method = decoder.frequentMethod(payload, strings: &strings) else {
                    Issue.record("not read: \(payload)")
                    continue
                }
                #expect(method.values.string("consumer-tag") == AMQPText.shortString(tag[...]))
                #expect(method.values.string("exchange") == AMQPText.shortString(exchange[...]))
                #expect(method.values.string("routing-key") == AMQPText.shortString(key[...]))
            }
        }
        // Seen twice in a row, a long tag is the very String made the first time.
        let long = deliver(texts[4], [], [])[...]
        let a = decoder.frequentMethod(long, strings: &strings)?.values.string("consumer-tag") ?? ""
        let b = decoder.frequentMethod(long, strings: &strings)?.values.string("consumer-tag") ?? ""
        #expect(a.count > 15)
        #expect(unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self))
    }
}
