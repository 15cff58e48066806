@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

/// Encodes a value for each argument of a method, as a peer would, and returns the values the
/// decoder must show. Bits are packed into octets, least significant bit first (§4.2.5.2).
private func synthesize(_ spec: AMQPMethodSpec) -> (bytes: [UInt8], expected: [(key: String, value: FieldValue)]) {
    var bytes: [UInt8] = []
    var expected: [(String, FieldValue)] = []
    var bitCount = 0
    for (i, arg) in spec.arguments.enumerated() {
        if arg.type != .bit { bitCount = 0 }
        switch arg.type {
        case .bit:
            // Alternate set and clear, so packing order matters.
            let set = (i % 2) == 0
            if bitCount % 8 == 0 { bytes.append(0) }
            if set { bytes[bytes.count - 1] |= 1 << UInt8(bitCount % 8) }
            bitCount += 1
            expected.append((arg.key.string, .bool(set)))
        case .octet:
            bytes.append(UInt8(i + 1))
            expected.append((arg.key.string, .int(i + 1)))
        case .short:
            bytes += Wire.u16(UInt16(300 + i))
            expected.append((arg.key.string, .int(300 + i)))
        case .long:
            bytes += Wire.u32(UInt32(70_000 + i))
            expected.append((arg.key.string, .int(70_000 + i)))
        case .longlong, .timestamp:
            bytes += Wire.u64(UInt64(5_000_000_000 + i))
            expected.append((arg.key.string, .int(5_000_000_000 + i)))
        case .shortstr:
            let s = "\(arg.name)-\(i)"
            bytes += Wire.shortstr(s)
            expected.append((arg.key.string, .string(s)))
        case .longstr:
            let s = "long \(arg.name)"
            bytes += Wire.longstr(s)
            expected.append((arg.key.string, AMQPArgumentReader.secretArguments.contains(arg.name)
                                ? .secret(s) : .text(preview: s, length: s.utf8.count)))
        case .table:
            bytes += Wire.table([("x-arg", [0x49] + Wire.u32(42))])
            expected.append((arg.key.string, .none))
        }
    }
    return (bytes, expected)
}

@Suite("AMQP method table")
struct AMQPMethodTableTests {
    @Test("the generated table holds every class and method of 0-9-1 with RabbitMQ's extensions")
    func coverage() {
        #expect(AMQPSpec.classes.map(\.name) == ["connection", "channel", "access", "exchange", "queue", "basic", "tx", "confirm"])
        #expect(AMQPSpec.classes.map(\.methods.count) == [14, 6, 2, 8, 10, 18, 6, 2])
        #expect(AMQPSpec.allMethods.count == 66)
        let names = Set(AMQPSpec.allMethods.map(\.fullName))
        for name in ["connection.blocked", "connection.unblocked", "connection.update-secret", "connection.update-secret-ok",
                     "exchange.bind", "exchange.unbind-ok", "basic.nack", "confirm.select", "confirm.select-ok",
                     "tx.rollback-ok", "access.request", "basic.recover-async"] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(AMQPSpec.method(classID: 60, methodID: 40)?.carriesContent == true)
        #expect(AMQPSpec.allMethods.filter(\.carriesContent).map(\.fullName).sorted()
                == ["basic.deliver", "basic.get-ok", "basic.publish", "basic.return"])
        #expect(AMQPSpec.class(id: 60)?.properties.count == 14)
        #expect(AMQPSpec.method(classID: 50, methodID: 10)?.arguments.map(\.type)
                == [.short, .shortstr, .bit, .bit, .bit, .bit, .bit, .table])
    }

    @Test("constants: reply codes with names, frame types, frame-end")
    func constants() {
        #expect(AMQPReplyCode.preconditionFailed.description == "406 PRECONDITION_FAILED")
        #expect(AMQPReplyCode.notFound.name == "NOT_FOUND")
        #expect(AMQPReplyCode.accessRefused.name == "ACCESS_REFUSED")
        #expect(AMQPReplyCode.notAllowed.name == "NOT_ALLOWED")
        #expect(AMQPReplyCode.connectionForced.name == "CONNECTION_FORCED")
        #expect(AMQPReplyCode.internalError.name == "INTERNAL_ERROR")
        #expect(AMQPReplyCode(rawValue: 0x259).description == "0x0259 (unknown)")
        #expect(AMQPReplyCode.preconditionFailed.errorClass == .softError)
        #expect(AMQPReplyCode.connectionForced.errorClass == .hardError)
        #expect(AMQPFrameType.heartbeat.rawValue == 8)
        #expect(AMQPFrameType(rawValue: 0x9F).description == "0x9F (unknown)")
        #expect(AMQPSpec.frameEnd == 0xCE)
        #expect(AMQPMethodID(classID: 60, methodID: 0x9F).description == "basic.0x009F (unknown)")
        #expect(AMQPMethodID(classID: 99, methodID: 1).description == "0x0063.0x0001 (unknown)")
    }

    @Test("every method in the table decodes from a synthesized encoding of its arguments",
          arguments: AMQPSpec.allMethods)
    func everyMethodDecodes(spec: AMQPMethodSpec) {
        let (arguments, expected) = synthesize(spec)
        let channel: UInt16 = spec.classID == 10 ? 0 : 3
        let pdu = AMQPDecoder.decode(frame: Wire.method(spec.classID, spec.methodID, channel: channel, arguments)[...])
        #expect(pdu.problems.isEmpty, "\(pdu.problems.map(\.description))")
        #expect(pdu.fields.first?.key == "frame_type")
        #expect(pdu.value("frame_type") == .string("method"))
        #expect(pdu.value("method") == .string(spec.fullName))
        #expect(pdu.value("class_id") == .int(Int(spec.classID)))
        #expect(pdu.value("method_id") == .int(Int(spec.methodID)))
        #expect(pdu.summary.hasPrefix(spec.fullName))
        let decoded = pdu.fields.first { $0.key == "arguments" }?.children ?? []
        #expect(decoded.map(\.key) == expected.map(\.key))
        for (field, want) in zip(decoded, expected) where want.value != .none {
            #expect(field.value == want.value, "\(spec.fullName) \(field.key)")
        }
        for field in decoded where field.key == "arguments" {
            #expect(field.children.first?.value == .int(42))
        }
    }

    @Test("a method cut short, one with bytes left over, and an unknown method are problems")
    func malformedMethods() {
        let cut = AMQPDecoder.decode(frame: Wire.method(60, 40, channel: 1, Wire.u16(0) + [5, 0x61])[...])
        #expect(cut.has("method-truncated"))
        let extra = AMQPDecoder.decode(frame: Wire.method(90, 10, channel: 1, [1, 2])[...])
        #expect(extra.has("trailing-bytes"))
        let unknown = AMQPDecoder.decode(frame: Wire.method(60, 0x9F, channel: 1, [1, 2])[...])
        #expect(unknown.has("unknown-method"))
        #expect(unknown.value("method") == .string("basic.0x009F (unknown)"))
        let bits = AMQPDecoder.decode(frame: Wire.method(60, 40, channel: 1, Wire.u16(0) + [0, 0] + [0xF1])[...])
        #expect(bits.has("reserved-bits"))
        #expect(bits.value("arguments.mandatory") == .bool(true))
    }
}
