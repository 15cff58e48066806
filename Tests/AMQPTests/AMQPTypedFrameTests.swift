@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing

/// The bytes of a hex string (the session's segments are written as hex).
private func hex(_ text: String) -> ArraySlice<UInt8> {
    var bytes: [UInt8] = []
    var i = text.startIndex
    while i < text.endIndex {
        let j = text.index(i, offsetBy: 2)
        bytes.append(UInt8(text[i..<j], radix: 16)!)
        i = j
    }
    return bytes[...]
}

/// Typed methods and content headers of real frames: RabbitMQ 3.10.8 and pika 1.3.2
/// (`RabbitMQSession.swift`), every field checked with the bytes it came from.
@Suite("AMQP typed frames")
struct AMQPTypedFrameTests {
    @Test("queue.declare: the queue name, the five bits in one octet, the empty arguments table")
    func queueDeclare() throws {
        // 01 0001 00000012 | 0032 000a queue.declare | 0000 ticket | 06 "orders" | 02 bits | 00000000 table | ce
        let (method, problems) = AMQPDecoder.method(frame: hex("010001000000120032000a0000066f72646572730200000000ce"))
        #expect(problems.isEmpty)
        guard case .queueDeclare(let declare)? = method else {
            Issue.record("not a queue.declare: \(String(describing: method))")
            return
        }
        #expect(method?.id == .queueDeclare)
        #expect(declare.ticket == Ranged(0, 11..<13))
        #expect(declare.queue == Ranged("orders", 13..<20))
        #expect(declare.passive == AMQPBit(false, range: 20..<21, bit: 0))
        #expect(declare.durable == AMQPBit(true, range: 20..<21, bit: 1))
        #expect(declare.exclusive == AMQPBit(false, range: 20..<21, bit: 2))
        #expect(declare.autoDelete == AMQPBit(false, range: 20..<21, bit: 3))
        #expect(declare.nowait == AMQPBit(false, range: 20..<21, bit: 4))
        #expect(declare.arguments == Ranged(AMQPFieldTable(), 21..<25))
        #expect(declare.argumentList.count == 8)
    }

    @Test("channel.close: reply code and text, and the class and method that failed")
    func channelClose() throws {
        let frame = "0100010000008300140028019678505245434f4e444954494f4e5f4641494c4544202d20696e6571756976616c656e7420617267202764757261626c652720666f7220717565756520276f72646572732720696e2076686f737420272f273a207265636569766564202766616c736527206275742063757272656e74206973202774727565270032000ace"
        let (method, problems) = AMQPDecoder.method(frame: hex(frame))
        #expect(problems.isEmpty)
        guard case .channelClose(let close)? = method else {
            Issue.record("not a channel.close: \(String(describing: method))")
            return
        }
        #expect(close.replyCode == Ranged(406, 11..<13))
        #expect(close.replyText?.value.hasPrefix("PRECONDITION_FAILED - inequivalent arg 'durable'") == true)
        #expect(close.replyText?.range == 13..<134)
        #expect(close.classID == Ranged(50, 134..<136))
        #expect(close.methodID == Ranged(10, 136..<138))
    }

    @Test("connection.start-ok: the client properties as a typed table, nested tables included")
    func startOK() throws {
        let (method, problems) = AMQPDecoder.method(frame: hex(rabbitMQSession[2].1))
        #expect(problems.isEmpty)
        guard case .connectionStartOK(let startOK)? = method, let properties = startOK.clientProperties else {
            Issue.record("not a connection.start-ok with client properties")
            return
        }
        #expect(properties.range == 11..<(11 + 4 + 0xFE))
        #expect(properties.value.entries.map(\.name) == ["product", "platform", "capabilities", "information", "version"])
        let product = properties.value.entries[0]
        #expect(product.type == UInt8(ascii: "S"))
        // 4 (table length) + 1 + 7 ("product") + 1 (type) + 4 + 26 (the string) from offset 11.
        #expect(product.range == 15..<(15 + 1 + 7 + 1 + 4 + 26))
        guard case .longString(let name) = product.value else {
            Issue.record("product is not a long string")
            return
        }
        #expect(String(decoding: name.bytes, as: UTF8.self) == "Pika Python Client Library")
        guard case .table(let capabilities)? = properties.value["capabilities"] else {
            Issue.record("capabilities is not a table")
            return
        }
        #expect(capabilities.entries.first?.name == "authentication_failure_close")
        #expect(capabilities.entries.first?.value == .boolean(true))
        #expect(startOK.mechanism?.value == "PLAIN")
        #expect(startOK.response?.value.bytes.elementsEqual([0] + Array("guest".utf8) + [0] + Array("guest".utf8)) == true)
        #expect(startOK.locale?.value == "en_US")
    }

    @Test("a method cut short: the arguments read are there, the rest nil, the problem named")
    func cutShort() throws {
        // basic.publish whose frame ends inside the routing key: size 0x0c, no frame-end held.
        var bytes = Array(hex("0100010000000f003c0028000000066f726465727300ce"))
        bytes.removeLast(4)
        let (method, problems) = AMQPDecoder.method(frame: bytes[...])
        guard case .basicPublish(let publish)? = method else {
            Issue.record("not a basic.publish: \(String(describing: method))")
            return
        }
        #expect(publish.exchange == Ranged("", 13..<14))
        #expect(publish.routingKey == nil)
        #expect(publish.mandatory == nil)
        #expect(!problems.isEmpty)
    }

    @Test("an unknown method keeps its ids and argument bytes")
    func unknownMethod() throws {
        let (method, problems) = AMQPDecoder.method(frame: (Wire.method(60, 99, channel: 1, [1, 2, 3]))[...])
        #expect(method == .unknown(classID: 60, methodID: 99, arguments: Ranged([1, 2, 3][...], 11..<14)))
        #expect(problems.map(\.code.rawValue) == ["unknown-method"])
    }

    @Test("a content header: body size, flags and each basic property with its range; headers typed")
    func contentHeader() throws {
        // 02 0001 00000056 | 003c 0000 | 0000000000001770 | b080 | content-type, headers, delivery-mode, message-id | ce
        let frame = "02000100000056003c00000000000000001770b0800a746578742f706c61696e0000003403782d6e490000000103782d6c410000000b490000000153000000016103782d744600000004016b740103782d6444010000000f02036d2d31ce"
        let (header, problems) = AMQPDecoder.contentHeader(frame: hex(frame))
        #expect(problems.isEmpty)
        let h = try #require(header)
        #expect(h.classID == Ranged(60, 7..<9))
        #expect(h.weight == Ranged(0, 9..<11))
        #expect(h.bodySize == Ranged(6000, 11..<19))
        #expect(h.propertyFlags == Ranged(AMQPPropertyFlags(words: [0xB080]), 19..<21))
        #expect(h.properties.contentType == Ranged("text/plain", 21..<32))
        #expect(h.properties.headers?.range == 32..<88)
        #expect(h.properties.deliveryMode == Ranged(2, 88..<89))
        #expect(h.properties.messageID == Ranged("m-1", 89..<93))
        #expect(h.properties.priority == nil)
        #expect(h.propertiesRange == 21..<93)

        let headers = try #require(h.properties.headers?.value)
        #expect(headers.entries.map(\.name) == ["x-n", "x-l", "x-t", "x-d"])
        #expect(headers.entries[0].value == .int32(1))
        #expect(headers.entries[0].range == 36..<45)
        guard case .array(let list) = headers.entries[1].value else {
            Issue.record("x-l is not an array")
            return
        }
        #expect(list.items.map(\.value) == [.int32(1), .longString(AMQPLongString(bytes: [0x61][...], declaredLength: 1))])
        #expect(list.items.map(\.range) == [54..<59, 59..<65])
        #expect(headers["x-t"] == .table(AMQPFieldTable(entries: [
            AMQPFieldTable.Entry(name: "k", type: UInt8(ascii: "t"), value: .boolean(true), range: 74..<78)])))
        #expect(headers["x-d"] == .decimal(scale: 1, mantissa: 15))
    }

    @Test("a table nested past the depth limit is kept as skipped bytes")
    func depthLimit() throws {
        var options = AMQPOptions()
        options.maxFieldTableDepth = 1
        // queue.declare whose arguments hold "a" = table { "b" = true }.
        let inner: [UInt8] = [0x01, 0x62, 0x74, 0x01]
        let table = Wire.u32(UInt32(3 + 4 + inner.count)) + [0x01, 0x61, 0x46] + Wire.u32(UInt32(inner.count)) + inner
        let arguments = Wire.u16(0) + Wire.shortstr("q") + [0] + table
        let (method, problems) = AMQPDecoder.method(frame: Wire.method(50, 10, channel: 1, arguments)[...], options: options)
        guard case .queueDeclare(let declare)? = method else {
            Issue.record("not a queue.declare")
            return
        }
        #expect(declare.arguments?.value["a"] == .table(AMQPFieldTable(skippedBytes: inner.count)))
        #expect(problems.map(\.code.rawValue) == ["table-too-deep"])
    }

    @Test("every method of the spec decodes into its own case, whatever its arguments")
    func everyMethod() {
        for spec in AMQPSpec.allMethods {
            let id = AMQPMethodID(classID: spec.classID, methodID: spec.methodID)
            var reader = AMQPArgumentReader([], base: 11, options: AMQPOptions(), address: nil)
            let method = AMQPMethod.decodeArguments(id, &reader)
            #expect(method?.id == id, "\(spec.fullName)")
            #expect(method?.argumentList.isEmpty == true, "\(spec.fullName): nothing read from no bytes")
        }
    }
}
