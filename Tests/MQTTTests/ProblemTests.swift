import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection

@Suite("Problems raised by crafted packets")
struct ProblemTests {
    static let cases: [(String, [UInt8], MQTTVersion, String)] = [
        ("SUBSCRIBE with flags 0b0000", packet(0x80,                    // SUBSCRIBE, flags 0 (must be 0b0010)
            [0x00, 0x01] + str("a") + [0x00]), .v3_1_1, "reserved-flags"),
        ("UNSUBSCRIBE with flags 0b0000", packet(0xA0,                  // UNSUBSCRIBE, flags 0
            [0x00, 0x01] + str("a")), .v3_1_1, "reserved-flags"),
        ("PUBREL with flags 0b0000", [0x60, 0x02, 0x00, 0x01], .v3_1_1, "reserved-flags"),
        ("PUBACK with flags 0b0001", [0x41, 0x02, 0x00, 0x01], .v3_1_1, "reserved-flags"),
        ("PINGREQ with flags 0b1000", [0xC8, 0x00], .v5, "reserved-flags"),
        ("PUBLISH QoS 3", packet(0x36,                                  // PUBLISH, QoS bits 11
            str("a") + [0x00, 0x01]), .v3_1_1, "qos-3"),
        ("PUBLISH QoS 0 with DUP", packet(0x38, str("a")), .v3_1_1, "dup-with-qos-0"),
        ("PUBLISH QoS 1 with packet id 0", packet(0x32,
            str("a") + [0x00, 0x00]), .v3_1_1, "zero-packet-id"),
        ("PUBLISH QoS 1 missing its packet id", packet(0x32,            // remaining length ends after the topic
            str("a")), .v3_1_1, "remaining-length-short"),
        ("PUBACK with packet id 0", [0x40, 0x02, 0x00, 0x00], .v3_1_1, "zero-packet-id"),
        ("PUBLISH topic with +", packet(0x30, str("a/+/b")), .v3_1_1, "wildcard-in-topic"),
        ("PUBLISH topic with #", packet(0x30, str("a/#")), .v5, "wildcard-in-topic"),
        ("PUBLISH topic not UTF-8", packet(0x30, [0x00, 0x02, 0xC3, 0x28]), .v3_1_1, "invalid-utf8"),
        ("PUBLISH topic with U+0000", packet(0x30, [0x00, 0x03, 0x61, 0x00, 0x62]), .v3_1_1, "utf8-null"),
        ("PUBLISH 3.1.1 empty topic", packet(0x30, str("") + [0x41]), .v3_1_1, "empty-topic"),
        ("PUBLISH 5.0 empty topic without alias", packet(0x30, str("") + props([])), .v5, "empty-topic"),
        ("property not allowed in PUBLISH", packet(0x30,
            str("a") + props([0x11, 0, 0, 0, 1])), .v5, "property-not-allowed"),   // session expiry interval
        ("property not allowed in SUBACK", packet(0x90,
            [0x00, 0x01] + props([0x23, 0x00, 0x01]) + [0x00]), .v5, "property-not-allowed"),  // topic alias
        ("property repeated illegally", packet(0x30,
            str("a") + props([0x02, 0, 0, 0, 1, 0x02, 0, 0, 0, 2])), .v5, "property-repeated"),
        ("subscription identifier repeated in SUBSCRIBE", packet(0x82,
            [0x00, 0x01] + props([0x0B, 0x01, 0x0B, 0x02]) + str("a") + [0x00]), .v5, "property-repeated"),
        ("unknown property", packet(0x30, str("a") + props([0x2B, 0x00])), .v5, "unknown-property"),
        ("property length past the packet", packet(0x40,
            [0x00, 0x01, 0x00, 0x09, 0x1F]), .v5, "property-length-too-long"),
        ("bytes left over", [0x40, 0x03, 0x00, 0x01, 0xFF], .v3_1_1, "bytes-left-over"),
        ("PINGREQ with a body", [0xC0, 0x01, 0x00], .v3_1_1, "bytes-left-over"),
        ("content past the remaining length", packet(0x30, [0x00, 0x05, 0x61]), .v3_1_1, "remaining-length-short"),
        ("reserved packet type 0", [0x00, 0x00], .v3_1_1, "reserved-type"),
        ("AUTH in 3.1.1", [0xF0, 0x00], .v3_1_1, "reserved-type"),
        ("CONNECT reserved flag", packet(0x10,
            str("MQTT") + [0x04, 0x03, 0x00, 0x00] + str("c")), .v3_1_1, "connect-reserved-flag"),
        ("will QoS without will flag", packet(0x10,
            str("MQTT") + [0x04, 0x0A, 0x00, 0x00] + str("c")), .v3_1_1, "will-flags"),   // will QoS 1, clean
        ("will retain without will flag", packet(0x10,
            str("MQTT") + [0x04, 0x22, 0x00, 0x00] + str("c")), .v3_1_1, "will-flags"),
        ("password without user name in 3.1.1", packet(0x10,
            str("MQTT") + [0x04, 0x42, 0x00, 0x00] + str("c") + str("pw")), .v3_1_1, "password-without-username"),
        ("unknown protocol name", packet(0x10,
            str("MQTZ") + [0x04, 0x02, 0x00, 0x00] + str("c")), .v3_1_1, "unknown-protocol-name"),
        ("unknown protocol level", packet(0x10,
            str("MQTT") + [0x07, 0x02, 0x00, 0x00] + str("c")), .v3_1_1, "unknown-protocol-level"),
        ("empty SUBSCRIBE", [0x82, 0x02, 0x00, 0x01], .v3_1_1, "empty-subscribe"),
        ("empty UNSUBSCRIBE", [0xA2, 0x02, 0x00, 0x01], .v3_1_1, "empty-unsubscribe"),
        ("SUBSCRIBE 3.1.1 reserved option bits", packet(0x82,
            [0x00, 0x01] + str("a") + [0x04]), .v3_1_1, "subscribe-reserved-bits"),
        ("SUBSCRIBE 5.0 reserved option bits", packet(0x82,
            [0x00, 0x01] + props([]) + str("a") + [0x40]), .v5, "subscribe-reserved-bits"),
        ("SUBSCRIBE 5.0 retain handling 3", packet(0x82,
            [0x00, 0x01] + props([]) + str("a") + [0x30]), .v5, "retain-handling-3"),
        ("SUBSCRIBE requested QoS 3", packet(0x82, [0x00, 0x01] + str("a") + [0x03]), .v3_1_1, "qos-3"),
        ("SUBSCRIBE filter with # not last", packet(0x82,
            [0x00, 0x01] + str("a/#/b") + [0x00]), .v3_1_1, "invalid-topic-filter"),
        ("SUBACK 3.1.1 reserved return code", [0x90, 0x03, 0x00, 0x01, 0x03], .v3_1_1, "invalid-return-code"),
        ("CONNACK reserved return code", [0x20, 0x02, 0x00, 0x06], .v3_1_1, "unknown-return-code"),
        ("CONNACK session present on refusal", [0x20, 0x02, 0x01, 0x05], .v3_1_1, "session-present-on-refusal"),
        ("PUBACK 5.0 reason not allowed", [0x40, 0x03, 0x00, 0x01, 0x8E], .v5, "reason-code-not-allowed"),
        ("topic alias 0", packet(0x30, str("a") + props([0x23, 0x00, 0x00])), .v5, "topic-alias-zero"),
        ("unknown topic alias", packet(0x30, str("") + props([0x23, 0x00, 0x04])), .v5, "unknown-topic-alias"),
        ("non-minimal property varint", packet(0x30, str("a") + props([0x0B, 0x81, 0x00])), .v5, "non-minimal-variable-byte-integer"),
    ]

    @Test("each crafted packet raises its problem", arguments: cases)
    func raises(name: String, bytes: [UInt8], version: MQTTVersion, code: String) {
        let pdu = decode(bytes, version)
        #expect(pdu.problemCodes.contains(code), "\(name): got \(pdu.problemCodes)")
        if let problem = pdu.problems.first(where: { $0.code.rawValue == code }) {
            #expect(problem.severity == .error)
            #expect(problem.reference?.hasPrefix("MQTT ") == true)
            #expect(!problem.message.isEmpty)
        }
    }

    @Test("problems carry byte ranges inside the PDU", arguments: cases)
    func ranges(name: String, bytes: [UInt8], version: MQTTVersion, code: String) {
        let pdu = decode(bytes, version)
        for problem in pdu.problems {
            if let range = problem.range { #expect(range.upperBound <= pdu.wireLength, "\(name) \(problem.code)") }
        }
    }

    @Test("a repeated property stays in the text tree but only the first reaches JSON")
    func repeatedPropertyTextOnly() {
        let pdu = decode(packet(0x30, str("a") + props([0x02, 0, 0, 0, 1, 0x02, 0, 0, 0, 2])), .v5)
        let expiry = pdu.field("properties")?.children.filter { $0.key == "message_expiry_interval" } ?? []
        #expect(expiry.map(\.value) == [.int(1), .int(2)])
        #expect(expiry.map(\.textOnly) == [false, true])
    }

    @Test("an unknown property stops the property list; the payload is still found")
    func unknownPropertyStops() {
        let pdu = decode(packet(0x30, str("a") + props([0x2B, 0x01, 0x02]) + Array("hey".utf8)), .v5)
        #expect(pdu.problemCodes == ["unknown-property"])
        #expect(pdu.field("payload")?.value == .text(preview: "hey", length: 3))
    }

    @Test("a second CONNECT on a connection is a problem")
    func secondConnect() {
        let pdus = MQTTDecoder.decodeAll(Fixture.connect311 + Fixture.connect311)
        #expect(pdus.count == 2)
        #expect(!pdus[0].problemCodes.contains("second-connect"))
        #expect(pdus[1].problemCodes.contains("second-connect"))
    }

    @Test("a password is a secret")
    func secret() {
        let v5 = decode(packet(0x10, str("MQTT") + [0x05, 0xC0, 0x00, 0x00] + props([]) + str("c") + str("u") + str("pa55")), .v5)
        #expect(v5.field("password")?.value == .secret("pa55"))
        #expect(v5.problems.isEmpty)   // a password alone is legal in 5.0, and so is this one with a user name
        let binary = decode(packet(0x10, str("MQTT") + [0x04, 0xC0, 0x00, 0x00] + str("c") + str("u") + [0x00, 0x02, 0xFF, 0xFE]), .v3_1_1)
        #expect(binary.field("password")?.value == .secret("fffe"))
    }
}
