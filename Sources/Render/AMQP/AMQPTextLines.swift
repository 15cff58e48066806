import AMQP
import Dissection

/// Text-tree lines that are the same for every frame with the same value (frame type, frame-end,
/// class, method), made once for the values the spec defines instead of once per frame.
enum AMQPTextLines {
    private static let frameTypes: [String] = (0...255).map { "Type: \(AMQPFrameType(rawValue: UInt8($0)))" }
    private static let goodFrameEnd = "Frame-End: \(AMQPHex.string(UInt64(AMQPSpec.frameEnd), digits: 2))"
    private static let classes: [UInt16: String] = Dictionary(uniqueKeysWithValues: AMQPSpec.classes.map {
        ($0.id, makeClassLine($0.id))
    })
    private static let methods: [UInt32: String] = Dictionary(uniqueKeysWithValues: AMQPSpec.allMethods.map {
        let id = AMQPMethodID(classID: $0.classID, methodID: $0.methodID)
        return (id.rawValue, makeMethodLine(id))
    })

    /// `Type: method (1)`.
    static func frameType(_ type: AMQPFrameType) -> String { frameTypes[Int(type.rawValue)] }

    /// `Frame-End: 0xCE`.
    static func frameEnd(_ end: UInt8) -> String {
        end == AMQPSpec.frameEnd ? goodFrameEnd : "Frame-End: \(AMQPHex.string(UInt64(end), digits: 2))"
    }

    /// `Class: basic (60)`.
    static func classID(_ id: UInt16) -> String { classes[id] ?? makeClassLine(id) }

    /// `Method-Id: publish (40)`.
    static func methodID(_ id: AMQPMethodID) -> String { methods[id.rawValue] ?? makeMethodLine(id) }

    private static func makeClassLine(_ id: UInt16) -> String { "Class: \(AMQPClassID(rawValue: id))" }

    private static func makeMethodLine(_ id: AMQPMethodID) -> String {
        "Method-Id: \(id.spec.map { "\($0.methodName) (\(id.methodID))" } ?? AMQPFrameType.unknown(UInt64(id.methodID), digits: 4))"
    }

    /// The text lines of the property flag bits, `1... .... .... .... = Content-Type: present`,
    /// made once per class: they are the same for every content header.
    private static let basicFlagLines = makeFlagLines(AMQPSpec.class(id: 60)?.properties ?? [])

    static func flagLines(classID: UInt16, properties: [AMQPArgumentSpec]) -> [(key: FieldKey, present: String, absent: String)] {
        classID == 60 ? basicFlagLines : makeFlagLines(properties)
    }

    private static func makeFlagLines(_ properties: [AMQPArgumentSpec]) -> [(key: FieldKey, present: String, absent: String)] {
        properties.enumerated().map { i, prop in
            func line(_ set: Bool) -> String {
                var mask = Array(repeating: Character("."), count: 16)
                mask[i % 15] = set ? "1" : "0"
                let text = String(mask[0..<4]) + " " + String(mask[4..<8]) + " " + String(mask[8..<12]) + " " + String(mask[12..<16])
                return "\(text) = \(prop.label): \(set ? "present" : "absent")"
            }
            return (FieldKey(checking: "flag_" + prop.key.string), line(true), line(false))
        }
    }
}
