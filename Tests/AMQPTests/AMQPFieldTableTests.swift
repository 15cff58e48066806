@testable import AMQP
@testable import AMQPViews
import Dissection
import Testing
import TestSupport

/// The table decoded (typed), then shown as the field tree shows it.
private func decodeTable(_ bytes: [UInt8], options: AMQPOptions = AMQPOptions()) -> (Field?, [Problem]) {
    var decoder = AMQPFieldTableDecoder(options: options)
    var reader = ByteReader(bytes)
    let table = decoder.readTable(&reader, base: 0, label: "Arguments")
    let field = table.map { $0.value.field(key: "arguments", label: "Arguments", range: $0.range, depthLimit: options.effectiveTableDepth) }
    return (field, decoder.problems)
}

private func child(_ field: Field?, _ key: String) -> Field? {
    field?.children.first { $0.key == key }
}

@Suite("AMQP field tables")
struct AMQPFieldTableTests {
    /// One entry per type letter RabbitMQ reads and writes, with the value it must decode to.
    static let everyType: [(name: String, encoded: [UInt8], expected: FieldValue)] = [
        ("bool", [0x74, 0x01], .bool(true)),                                       // 't' boolean
        ("i8", [0x62, 0xFE], .int(-2)),                                            // 'b' signed 8
        ("u8", [0x42, 0xFE], .int(254)),                                           // 'B' unsigned 8
        ("i16", [0x73, 0xFF, 0xFE], .int(-2)),                                     // 's' signed 16 (RabbitMQ)
        ("u16", [0x75, 0xFF, 0xFE], .int(65534)),                                  // 'u' unsigned 16
        ("i32", [0x49] + Wire.u32(0xFFFF_FFFE), .int(-2)),                        // 'I' signed 32
        ("u32", [0x69] + Wire.u32(0xFFFF_FFFE), .int(4_294_967_294)),             // 'i' unsigned 32
        ("i64", [0x6C] + Wire.u64(0xFFFF_FFFF_FFFF_FFFE), .int(-2)),              // 'l' signed 64
        ("L64", [0x4C] + Wire.u64(0xFFFF_FF00_0000_0000), .int(-1_099_511_627_776)), // 'L' signed 64: -2^40
        ("float", [0x66] + Wire.u32(Float(1.5).bitPattern), .string("1.5")),     // 'f' float
        ("double", [0x64] + Wire.u64(Double(-0.25).bitPattern), .string("-0.25")), // 'd' double
        ("decimal", [0x44, 0x02] + Wire.u32(12345), .string("123.45")),           // 'D' scale 2, 12345
        ("decimal-neg", [0x44, 0x03] + Wire.u32(UInt32(bitPattern: -1_234)), .string("-1.234")), // 'D' scale 3, signed -1234
        ("decimal-small", [0x44, 0x04] + Wire.u32(UInt32(bitPattern: -5)), .string("-0.0005")), // 'D' scale 4, -5
        ("string", [0x53] + Wire.longstr("héllo"), .text(preview: "héllo", length: 6)), // 'S' long string
        ("bytes", [0x78] + Wire.longstr([0, 1, 2]), .bytes(preview: [0, 1, 2], length: 3)), // 'x' byte array
        ("time", [0x54] + Wire.u64(1_700_000_000), .int(1_700_000_000)),          // 'T' timestamp
        ("void", [0x56], .none),                                                   // 'V' void
    ]

    @Test("every field type RabbitMQ uses decodes", arguments: everyType.indices)
    func everyFieldType(index: Int) {
        let entry = AMQPFieldTableTests.everyType[index]
        let (table, problems) = decodeTable(Wire.table([(entry.name, entry.encoded)]))
        #expect(problems.isEmpty)
        #expect(table?.children.count == 1)
        #expect(child(table, entry.name)?.value == entry.expected)
        #expect(child(table, entry.name)?.range == 4..<(4 + 1 + entry.name.utf8.count + entry.encoded.count))
    }

    @Test("all types together, with a nested table and an array, decode in order")
    func allTogether() {
        let nested = Wire.table([("inner", [0x74, 0x00])])
        let arrayBody: [UInt8] = [0x49] + Wire.u32(7) + [0x53] + Wire.longstr("x") + [0x46] + nested
        let entries = AMQPFieldTableTests.everyType.map { ($0.name, $0.encoded) }
            + [("table", [0x46] + nested), ("array", [0x41] + Wire.u32(UInt32(arrayBody.count)) + arrayBody)]
        let (table, problems) = decodeTable(Wire.table(entries))
        #expect(problems.isEmpty)
        #expect(table?.children.map(\.key) == AMQPFieldTableTests.everyType.map(\.name) + ["table", "array"])
        #expect(child(child(table, "table"), "inner")?.value == .bool(false))
        let array = child(table, "array")
        #expect(array?.isList == true)
        #expect(array?.children.map(\.value) == [.int(7), .text(preview: "x", length: 1), .none])
        #expect(array?.children.last?.children.first?.value == .bool(false))
        #expect(child(table, "time")?.line == "time (timestamp): 1700000000 (2023-11-14T22:13:20Z)")
    }


    @Test("100,000 levels of nested tables are a problem, not a crash")
    func deepNesting() {
        // Each level is a table holding one entry "n" of type 'F': length, 0x01 "n" 'F', next level.
        // Sizes are worked out inside out, then the bytes written outside in (no quadratic copying).
        let levels = 100_000
        var sizes = [4]                                   // the innermost, empty table: its length only
        for _ in 0..<levels { sizes.append(4 + 3 + sizes[sizes.count - 1]) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sizes[levels])
        for k in stride(from: levels, through: 1, by: -1) {
            bytes += Wire.u32(UInt32(sizes[k] - 4)) + [0x01, 0x6E, 0x46]
        }
        bytes += Wire.u32(0)
        #expect(bytes.count == sizes[levels])
        let (table, problems) = decodeTable(bytes)
        #expect(problems.map(\.code.rawValue) == ["table-too-deep"])
        var depth = 0
        var level = table
        while let next = level?.children.first {
            depth += 1
            level = next
        }
        #expect(depth == 64)
    }

    @Test("deeply nested arrays are capped the same way")
    func deepArrays() {
        // 'A', the length, then the next array inside; the innermost is empty.
        let levels = 10_000
        var bytes: [UInt8] = []
        for k in stride(from: levels, through: 1, by: -1) {
            bytes += [0x41] + Wire.u32(UInt32(5 * (k - 1)) + 5)
        }
        bytes += [0x41] + Wire.u32(0)
        let (_, problems) = decodeTable(Wire.table([("a", bytes)]), options: AMQPOptions(maxFieldTableDepth: 8))
        #expect(problems.map(\.code.rawValue) == ["table-too-deep"])
    }

    @Test("lengths that lie are problems, never traps", arguments: [
        // (bytes, problem code)
        (Wire.u32(1000) + [0x01, 0x61, 0x74, 0x01], "length-past-end"),                 // table claims 1000 bytes
        (Wire.table([("s", [0x53] + Wire.u32(99) + [0x61])]), "length-past-end"),      // 'S' claims 99 bytes
        (Wire.table([("a", [0x41] + Wire.u32(0xFFFF_FFFF))]), "length-past-end"),      // 'A' claims 4 GiB
        (Wire.table([("q", [0x51, 0x00])]), "unknown-field-type"),                      // 'Q' is no type
        (Wire.table([("i", [0x49, 0x00])]), "table-truncated"),                         // 'I' with 1 of 4 bytes
        (Wire.u32(3) + [0x09, 0x61, 0x62], "table-truncated"),                          // name longer than the table
    ])
    func lyingLengths(bytes: [UInt8], code: String) {
        let (table, problems) = decodeTable(bytes)
        #expect(table != nil)
        #expect(problems.map(\.code.rawValue).contains(code))
    }

    @Test("AMQPLAIN's response is a table without its length; LOGIN gives the user")
    func amqplain() {
        let response = Array(Wire.table([("LOGIN", [0x53] + Wire.longstr("bob")), ("PASSWORD", [0x53] + Wire.longstr("pw"))]).dropFirst(4))
        #expect(AMQPSASL.user(mechanism: "AMQPLAIN", response: .longString(response[...], length: response.count)) == "bob")
        #expect(AMQPSASL.user(mechanism: "PLAIN", response: .longString([0, 0x61, 0, 0x62][...], length: 4)) == "a")
        #expect(AMQPSASL.user(mechanism: "PLAIN", response: .longString([0x61][...], length: 1)) == nil)
    }
}
