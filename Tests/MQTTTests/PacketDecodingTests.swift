import Testing
@testable import MQTT
@testable import MQTTViews
import Dissection

@Suite("Packets of MQTT 3.1 and 3.1.1")
struct PacketDecoding3Tests {
    @Test("CONNECT 3.1.1: protocol, flags bit by bit, keep alive, client id, credentials")
    func connect() {
        let pdu = decode(Fixture.connect311, .v3_1_1)
        #expect(pdu.fields.first?.key == "type")
        #expect(pdu.fields.dropFirst().first?.key == "remaining_length")
        #expect(pdu.string("type") == "CONNECT")
        #expect(pdu.int("remaining_length") == Fixture.connect311.count - 2)
        #expect(pdu.string("protocol_name") == "MQTT")
        #expect(pdu.int("protocol_version") == 4)
        #expect(pdu.int("connect_flags") == 0xC2)
        #expect(pdu.bool("username_flag") == true)
        #expect(pdu.bool("password_flag") == true)
        #expect(pdu.bool("will_flag") == false)
        #expect(pdu.bool("will_retain") == false)
        #expect(pdu.int("will_qos") == 0)
        #expect(pdu.bool("clean_session") == true)
        #expect(pdu.bool("reserved_flag") == false)
        #expect(pdu.int("keep_alive") == 60)
        #expect(pdu.string("client_id") == "sensor-1")
        #expect(pdu.string("username") == "alice")
        #expect(pdu.field("password")?.value == .secret("s3cret"))
        #expect(pdu.summary == "CONNECT v3.1.1 client=sensor-1 clean keep-alive=60 user=alice")
        #expect(pdu.problems.isEmpty)
        let lines = pdu.field("connect_flags")?.children.compactMap(\.line) ?? []
        #expect(lines.contains("1... .... = User Name Flag: Set"))
        #expect(lines.contains(".... ..1. = Clean Session Flag: Set"))
        #expect(lines.contains("...0 0... = QoS Level: At most once delivery (Fire and Forget) (0)"))
        #expect(pdu.field("type")?.line == "0001 .... = Message Type: Connect Command (1)")
        #expect(pdu.field("remaining_length")?.range == 1..<2)
    }

    @Test("CONNECT 3.1 (MQIsdp) with a will")
    func connect31() {
        let pdu = decode(Fixture.connect31, .v3_1_1)
        #expect(pdu.string("protocol_name") == "MQIsdp")
        #expect(pdu.int("protocol_version") == 3)
        #expect(pdu.bool("will_flag") == true)
        #expect(pdu.bool("will_retain") == true)
        #expect(pdu.int("will_qos") == 1)
        #expect(pdu.string("will_topic") == "last/will")
        #expect(pdu.field("will_payload")?.value == .text(preview: "gone", length: 4))
        #expect(pdu.string("client_id") == "old-client")
        #expect(pdu.summary == "CONNECT v3.1 client=old-client clean keep-alive=10 will=last/will")
        #expect(pdu.problems.isEmpty)
    }

    @Test("CONNACK 3.1.1: session present and return code names", arguments: [
        (Fixture.connack311Accepted, true, 0, "Connection Accepted", "CONNACK accepted session-present"),
        (Fixture.connack311NotAuthorized, false, 5, "Connection Refused: not authorized", "CONNACK refused: not authorized (0x05)"),
    ])
    func connack(bytes: [UInt8], session: Bool, code: Int, reason: String, summary: String) {
        let pdu = decode(bytes, .v3_1_1)
        #expect(pdu.string("type") == "CONNACK")
        #expect(pdu.bool("session_present") == session)
        #expect(pdu.int("reason_code") == code)
        #expect(pdu.string("reason") == reason)
        #expect(pdu.summary == summary)
        #expect(pdu.problems.isEmpty)
    }

    @Test("CONNACK 3.1: first byte reserved, return code named")
    func connack31() {
        let pdu = decode(Fixture.connack31, .v3_1)
        #expect(pdu.int("reason_code") == 2)
        #expect(pdu.string("reason") == "Connection Refused: identifier rejected")
        #expect(pdu.field("session_present") == nil)
        #expect(pdu.summary == "CONNACK refused: identifier rejected (0x02)")
    }

    @Test("PUBLISH QoS 1: fixed header bits, topic, packet id, payload")
    func publishQoS1() {
        let pdu = decode(Fixture.publish311QoS1, .v3_1_1)
        #expect(pdu.string("type") == "PUBLISH")
        #expect(pdu.int("qos") == 1)
        #expect(pdu.bool("dup") == false)
        #expect(pdu.bool("retain") == false)
        #expect(pdu.string("topic") == "sensors/kitchen/temp")
        #expect(pdu.int("packet_id") == 7)
        #expect(pdu.int("payload_length") == 4)
        #expect(pdu.field("payload")?.value == .text(preview: "21.5", length: 4))
        #expect(pdu.summary == "PUBLISH id=7 QoS 1 sensors/kitchen/temp (4 bytes)")
        #expect(pdu.problems.isEmpty)
        let lines = pdu.field("type")?.children.compactMap(\.line) ?? []
        #expect(pdu.field("type")?.line == "0011 .... = Message Type: Publish Message (3)")
        #expect(lines == [".... 0... = DUP Flag: Not set",
                          ".... .01. = QoS Level: At least once delivery (Acknowledged deliver) (1)",
                          ".... ...0 = Retain: Not set"])
    }

    @Test("PUBLISH QoS 0 has no packet id and shows retain")
    func publishQoS0() {
        let pdu = decode(Fixture.publish311QoS0Retain, .v3_1_1)
        #expect(pdu.int("qos") == 0)
        #expect(pdu.bool("retain") == true)
        #expect(pdu.field("packet_id") == nil)
        #expect(pdu.summary == "PUBLISH QoS 0 a/b (2 bytes) retain")
    }

    @Test("PUBACK, PUBREC, PUBREL, PUBCOMP carry a packet id", arguments: [
        (Fixture.puback311, "PUBACK", 7), (Fixture.pubrec311, "PUBREC", 8),
        (Fixture.pubrel311, "PUBREL", 8), (Fixture.pubcomp311, "PUBCOMP", 8),
    ])
    func acks(bytes: [UInt8], type: String, id: Int) {
        let pdu = decode(bytes, .v3_1_1)
        #expect(pdu.string("type") == type)
        #expect(pdu.int("packet_id") == id)
        #expect(pdu.summary == "\(type) id=\(id)")
        #expect(pdu.problems.isEmpty)
    }

    @Test("SUBSCRIBE lists filters with their QoS")
    func subscribe() {
        let pdu = decode(Fixture.subscribe311, .v3_1_1)
        #expect(pdu.int("packet_id") == 3)
        let topics = pdu.field("topics")
        #expect(topics?.isList == true)
        #expect(topics?.elements.map { $0.child("filter")?.value.stringValue } == ["a/+/c", "x/#"])
        #expect(topics?.elements.map { $0.find("qos")?.value.intValue } == [1, 0])
        #expect(pdu.summary == "SUBSCRIBE id=3 a/+/c QoS 1, x/# QoS 0")
        #expect(pdu.problems.isEmpty)
    }

    @Test("SUBACK lists return codes with names")
    func suback() {
        let pdu = decode(Fixture.suback311, .v3_1_1)
        let codes = pdu.field("reason_codes")?.elements ?? []
        #expect(codes.map { $0.child("code")?.value.intValue } == [1, 0x80])
        #expect(codes.map { $0.child("reason")?.value.stringValue } == ["Granted QoS 1", "Failure"])
        #expect(pdu.summary == "SUBACK id=3 granted QoS 1, failure (0x80)")
        #expect(pdu.problems.isEmpty)
    }

    @Test("UNSUBSCRIBE lists filters; UNSUBACK has only the packet id")
    func unsubscribe() {
        let pdu = decode(Fixture.unsubscribe311, .v3_1_1)
        #expect(pdu.field("topics")?.elements.map { $0.child("filter")?.value.stringValue } == ["a/b", "c"])
        #expect(pdu.summary == "UNSUBSCRIBE id=4 a/b, c")
        let ack = decode(Fixture.unsuback311, .v3_1_1)
        #expect(ack.int("packet_id") == 4)
        #expect(ack.summary == "UNSUBACK id=4")
        #expect(pdu.problems.isEmpty && ack.problems.isEmpty)
    }

    @Test("PINGREQ, PINGRESP, DISCONNECT", arguments: [
        (Fixture.pingreq, "PINGREQ"), (Fixture.pingresp, "PINGRESP"), (Fixture.disconnect311, "DISCONNECT"),
    ])
    func empty(bytes: [UInt8], type: String) {
        let pdu = decode(bytes, .v3_1_1)
        #expect(pdu.string("type") == type)
        #expect(pdu.int("remaining_length") == 0)
        #expect(pdu.summary == type)
        #expect(pdu.problems.isEmpty)
    }
}

@Suite("Packets of MQTT 5.0")
struct PacketDecoding5Tests {
    @Test("CONNECT 5.0: properties, repeated user properties, will properties")
    func connect() {
        let pdu = decode(Fixture.connect5, .v3_1_1)   // the CONNECT's own level decides the layout
        #expect(pdu.int("protocol_version") == 5)
        #expect(pdu.bool("clean_start") == true)
        #expect(pdu.bool("will_flag") == true)
        let properties = pdu.field("properties")
        #expect(properties?.child("session_expiry_interval")?.value == .int(120))
        #expect(properties?.child("topic_alias_maximum")?.value == .int(10))
        let users = properties?.child("user_properties")
        #expect(users?.isList == true)
        #expect(users?.elements.map { [$0.child("name")?.value.stringValue, $0.child("value")?.value.stringValue] }
                == [["region", "eu"], ["region", "us"]])
        #expect(pdu.field("will_properties")?.child("will_delay_interval")?.value == .int(5))
        #expect(pdu.string("client_id") == "sensor-1")
        #expect(pdu.string("will_topic") == "status/sensor-1")
        #expect(pdu.summary == "CONNECT v5.0 client=sensor-1 clean keep-alive=60 will=status/sensor-1")
        #expect(pdu.problems.isEmpty)
    }

    @Test("CONNACK 5.0: reason codes and properties", arguments: [
        (Fixture.connack5, 0, "Success", "CONNACK accepted"),
        (Fixture.connack5Refused, 0x87, "Not authorized", "CONNACK refused: not authorized (0x87)"),
    ])
    func connack(bytes: [UInt8], code: Int, reason: String, summary: String) {
        let pdu = decode(bytes, .v5)
        #expect(pdu.int("reason_code") == code)
        #expect(pdu.string("reason") == reason)
        #expect(pdu.summary == summary)
        #expect(pdu.problems.isEmpty)
        #expect(pdu.field("properties") != nil)
    }

    @Test("CONNACK 5.0 properties are named and typed")
    func connackProperties() {
        let pdu = decode(Fixture.connack5, .v5)
        #expect(pdu.field("properties")?.child("topic_alias_maximum")?.value == .int(5))
        #expect(pdu.field("properties")?.child("assigned_client_identifier")?.value == .string("auto-1"))
    }

    @Test("PUBLISH 5.0: every publish property, repeated subscription identifiers and user properties")
    func publish() {
        let pdu = decode(Fixture.publish5, .v5)
        #expect(pdu.string("topic") == "sensors/kitchen/temp")
        #expect(pdu.int("packet_id") == 9)
        #expect(pdu.int("qos") == 1)
        #expect(pdu.bool("retain") == true)
        let p = pdu.field("properties")
        #expect(p?.child("payload_format_indicator")?.value == .int(1))
        #expect(p?.child("message_expiry_interval")?.value == .int(3600))
        #expect(p?.child("content_type")?.value == .string("text/plain"))
        #expect(p?.child("response_topic")?.value == .string("reply/here"))
        #expect(p?.child("correlation_data")?.value == .bytes(preview: [0xAB, 0xCD], length: 2))
        #expect(p?.child("subscription_identifiers")?.elements.map(\.value) == [.int(129), .int(2)])
        #expect(p?.child("user_properties")?.elements.map { $0.child("value")?.value.stringValue } == ["v1", "v2"])
        #expect(pdu.int("payload_length") == 4)
        #expect(pdu.summary == "PUBLISH id=9 QoS 1 sensors/kitchen/temp (4 bytes) retain")
        #expect(pdu.problems.isEmpty)
    }

    @Test("PUBACK family 5.0: short forms and reason codes", arguments: [
        (Fixture.puback5Short, "PUBACK", 9, 0, "Success", "PUBACK id=9"),
        (Fixture.puback5Reason, "PUBACK", 9, 0x10, "No matching subscribers", "PUBACK id=9 no matching subscribers (0x10)"),
        (Fixture.pubrec5, "PUBREC", 10, 0, "Success", "PUBREC id=10"),
        (Fixture.pubrel5, "PUBREL", 10, 0x92, "Packet Identifier not found", "PUBREL id=10 packet identifier not found (0x92)"),
        (Fixture.pubcomp5, "PUBCOMP", 10, 0, "Success", "PUBCOMP id=10"),
    ])
    func acks(bytes: [UInt8], type: String, id: Int, code: Int, reason: String, summary: String) {
        let pdu = decode(bytes, .v5)
        #expect(pdu.string("type") == type)
        #expect(pdu.int("packet_id") == id)
        #expect(pdu.int("reason_code") == code)
        #expect(pdu.string("reason") == reason)
        #expect(pdu.summary == summary)
        #expect(pdu.problems.isEmpty)
    }

    @Test("PUBREC 5.0 reason string property")
    func pubrecReasonString() {
        #expect(decode(Fixture.pubrec5, .v5).field("properties")?.child("reason_string")?.value == .string("ok"))
    }

    @Test("SUBSCRIBE 5.0: subscription identifier and subscription options bit by bit")
    func subscribe() {
        let pdu = decode(Fixture.subscribe5, .v5)
        #expect(pdu.field("properties")?.child("subscription_identifier")?.value == .int(7))
        let first = pdu.field("topics")?.elements.first
        #expect(first?.child("filter")?.value == .string("a/+/c"))
        #expect(first?.find("qos")?.value == .int(1))
        #expect(first?.find("no_local")?.value == .bool(true))
        #expect(first?.find("retain_as_published")?.value == .bool(true))
        #expect(first?.find("retain_handling")?.value == .int(2))
        #expect(first?.find("no_local")?.line == ".... .1.. = No Local: Set")
        let second = pdu.field("topics")?.elements.last
        #expect(second?.find("no_local")?.value == .bool(false))
        #expect(second?.find("retain_handling")?.value == .int(0))
        #expect(pdu.summary == "SUBSCRIBE id=3 a/+/c QoS 1, x/# QoS 0")
        #expect(pdu.problems.isEmpty)
    }

    @Test("SUBACK and UNSUBACK 5.0: reason codes per filter")
    func acksWithCodes() {
        let suback = decode(Fixture.suback5, .v5)
        #expect(suback.field("reason_codes")?.elements.map { $0.child("reason")?.value.stringValue }
                == ["Granted QoS 1", "Not authorized"])
        #expect(suback.summary == "SUBACK id=3 granted QoS 1, not authorized (0x87)")
        let unsuback = decode(Fixture.unsuback5, .v5)
        #expect(unsuback.field("reason_codes")?.elements.map { $0.child("code")?.value.intValue } == [0, 0x11])
        #expect(unsuback.summary == "UNSUBACK id=4 success, no subscription existed (0x11)")
        #expect(suback.problems.isEmpty && unsuback.problems.isEmpty)
    }

    @Test("UNSUBSCRIBE 5.0 with a user property")
    func unsubscribe() {
        let pdu = decode(Fixture.unsubscribe5, .v5)
        #expect(pdu.field("properties")?.child("user_properties")?.elements.first?.child("name")?.value == .string("why"))
        #expect(pdu.summary == "UNSUBSCRIBE id=4 a/b")
        #expect(pdu.problems.isEmpty)
    }

    @Test("DISCONNECT 5.0: short form and reason with properties")
    func disconnect() {
        let short = decode(Fixture.disconnect5Short, .v5)
        #expect(short.string("reason") == "Normal disconnection")
        #expect(short.summary == "DISCONNECT")
        let long = decode(Fixture.disconnect5, .v5)
        #expect(long.int("reason_code") == 0x8E)
        #expect(long.summary == "DISCONNECT session taken over (0x8E)")
        #expect(long.field("properties")?.child("session_expiry_interval")?.value == .int(0))
        #expect(short.problems.isEmpty && long.problems.isEmpty)
    }

    @Test("AUTH 5.0: reason and authentication properties")
    func auth() {
        let pdu = decode(Fixture.auth5, .v5)
        #expect(pdu.string("type") == "AUTH")
        #expect(pdu.string("reason") == "Continue authentication")
        #expect(pdu.field("properties")?.child("authentication_method")?.value == .string("SCRAM-SHA-1"))
        #expect(pdu.field("properties")?.child("authentication_data")?.value == .bytes(preview: [1, 2, 3], length: 3))
        #expect(pdu.summary == "AUTH continue authentication (0x18)")
        #expect(pdu.problems.isEmpty)
    }

    @Test("unknown reason codes print as hex (unknown)")
    func unknownNames() {
        #expect(MQTTReasonCode(rawValue: 0xA9).name() == "0xA9 (unknown)")
        #expect(MQTTConnectReturnCode(rawValue: 9).name == "0x09 (unknown)")
        #expect(MQTTPropertyID(rawValue: 0x2B).name == "0x2B (unknown)")
        #expect(MQTTPacketType(rawValue: 0).name == "RESERVED")
    }
}

@Suite("Options per run: text lines")
struct TextLinesOptionTests {
    @Test("the field tree carries its bit-by-bit lines only with MQTTOptions.textLines; the values are the same")
    func textLinesPerRun() {
        var with = MQTTOptions(), without = MQTTOptions()
        with.textLines = true
        without.textLines = false
        var state = MQTTDirectionState()
        let packet = MQTTDecoder.decodePacket(Fixture.connect311[...], version: .v3_1_1, state: &state)
        let lined = packet.fieldTree(options: with), bare = packet.fieldTree(options: without)
        let flags = Field.find("connect_flags", in: lined), bareFlags = Field.find("connect_flags", in: bare)
        #expect(flags?.line == "Connect Flags: 0x\(String(Fixture.connect311[9], radix: 16, uppercase: true))")
        #expect(flags?.children.allSatisfy { $0.line != nil } == true)
        #expect(bareFlags?.line == nil)
        #expect(bareFlags?.children.allSatisfy { $0.line == nil } == true)
        #expect(bareFlags?.value == flags?.value)
        #expect(bare.map(\.key) == lined.map(\.key))
    }
}
