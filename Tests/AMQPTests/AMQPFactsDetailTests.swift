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
        for (bytes, frame, full) in AMQPTextDetailTests.mutations(seed: 0xFAC7, options: options) {
            guard let fast = decoder.decodeFacts(frame) else {
                declined += 1
                continue
            }
            vouched += 1
            #expect(full.pdu.problems.isEmpty, "\(bytes): \(full.pdu.problems.map(\.code))")
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
}
