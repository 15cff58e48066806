@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

@Suite("AMQP annotated fixtures")
struct AMQPFixtureTests {
    /// tshark: `Basic.Publish x=Mobile_Alarm bk=5`
    static let publish: [UInt8] = [
        0x01,                   // frame type 1: method
        0x00, 0x01,             // channel 1
        0x00, 0x00, 0x00, 0x16, // size 22
        0x00, 0x3C,             // class 60: basic
        0x00, 0x28,             // method 40: publish
        0x00, 0x00,             // ticket 0
        0x0C,                   // exchange: short string of 12
        0x4D, 0x6F, 0x62, 0x69, 0x6C, 0x65, 0x5F, 0x41, 0x6C, 0x61, 0x72, 0x6D, // "Mobile_Alarm"
        0x01, 0x35,             // routing-key: "5"
        0x01,                   // bits: mandatory (bit 0) set, immediate (bit 1) clear
        0xCE,                   // frame-end
    ]

    @Test("an annotated basic.publish decodes field by field, with byte ranges")
    func publishFieldByField() {
        let pdu = AMQPDecoder.decode(frame: AMQPFixtureTests.publish[...])
        #expect(pdu.problems.isEmpty)
        #expect(pdu.wireLength == 30)
        #expect(pdu.summary == "basic.publish exchange=Mobile_Alarm routing-key=5 mandatory")
        #expect(pdu.fields.map(\.key) == ["frame_type", "channel", "size", "class_id", "method_id", "method", "arguments", "frame_end"])
        let expected: [(String, FieldValue, Range<Int>)] = [
            ("frame_type", .string("method"), 0..<1),
            ("channel", .int(1), 1..<3),
            ("size", .int(22), 3..<7),
            ("class_id", .int(60), 7..<9),
            ("method_id", .int(40), 9..<11),
            ("arguments.ticket", .int(0), 11..<13),
            ("arguments.exchange", .string("Mobile_Alarm"), 13..<26),
            ("arguments.routing_key", .string("5"), 26..<28),
            ("arguments.mandatory", .bool(true), 28..<29),
            ("arguments.immediate", .bool(false), 28..<29),
            ("frame_end", .int(0xCE), 29..<30),
        ]
        for (path, value, range) in expected {
            #expect(pdu.value(path) == value, "\(path)")
            let key = String(path.split(separator: ".").last ?? "")
            #expect(pdu.field(key)?.range == range, "\(path)")
        }
        #expect(pdu.field("mandatory")?.line == ".......1 = Mandatory: true")
        #expect(pdu.field("immediate")?.line == "......0. = Immediate: false")
    }

    /// tshark: `Content-Header type=text/plain` (basic, body size 12, delivery-mode 2)
    static let header: [UInt8] = [
        0x02,                   // frame type 2: content header
        0x00, 0x01,             // channel 1
        0x00, 0x00, 0x00, 0x1A, // size 26
        0x00, 0x3C,             // class 60: basic
        0x00, 0x00,             // weight 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, // body size 12
        0x90, 0x00,             // flags: content-type (bit 15), delivery-mode (bit 12)
        0x0A, 0x74, 0x65, 0x78, 0x74, 0x2F, 0x70, 0x6C, 0x61, 0x69, 0x6E, // content-type "text/plain"
        0x02,                   // delivery-mode 2: persistent
        0xCE,                   // frame-end
    ]

    @Test("an annotated content header decodes field by field, with byte ranges")
    func headerFieldByField() {
        let pdu = AMQPDecoder.decode(frame: AMQPFixtureTests.header[...])
        #expect(pdu.problems.isEmpty)
        #expect(pdu.summary == "content header basic body-size=12 content-type=text/plain delivery-mode=2")
        #expect(pdu.field("body_size")?.range == 11..<19)
        #expect(pdu.field("property_flags")?.range == 19..<21)
        #expect(pdu.field("content_type")?.range == 21..<32)
        #expect(pdu.field("delivery_mode")?.range == 32..<33)
        #expect(pdu.field("delivery_mode")?.line == "Delivery-Mode: 2 (persistent)")
        #expect(pdu.field("flag_content_type")?.line == "1... .... .... .... = Content-Type: present")
        #expect(pdu.field("flag_content_type")?.textOnly == true)
    }
}
