import Dissection

/// What the written fast paths write around each content property's value, made once per class
/// of the spec as immortal bytes: a content header writes several properties, and each written
/// from its spec's strings (label, name, key) cost three String appends and a retain of the spec.
struct AMQPPropertyPieces {
    let type: AMQPWireType
    /// The text line up to the value: `        Content-Type: `.
    let line: ImmortalBytes
    /// The summary part up to the value: `content-type=`.
    let summary: ImmortalBytes
    /// The JSON member's key and colon: `"content_type":`.
    let jsonKey: ImmortalBytes
    /// Whether the text line names the mode after the value (`1 (non-persistent)`).
    let isDeliveryMode: Bool
    /// The property's line under `Property flags`, indented, with its newline
    /// (`AMQPContentHeaderDecoder.flagLines`), for its flag set and clear.
    let flagPresent: ImmortalBytes
    let flagAbsent: ImmortalBytes

    init(_ prop: AMQPArgumentSpec, flagLine: (key: String, present: String, absent: String)) {
        type = prop.type
        line = ImmortalBytes("        " + prop.label + ": ")
        summary = ImmortalBytes(prop.name + "=")
        var key = ByteSink(capacity: 64)
        JSONString.key(prop.key, into: &key)
        jsonKey = ImmortalBytes(key.take())
        isDeliveryMode = prop.name == "delivery-mode"
        flagPresent = ImmortalBytes("        " + flagLine.present + "\n")
        flagAbsent = ImmortalBytes("        " + flagLine.absent + "\n")
    }

    /// The pieces of each property of a class, in flag order; empty for a class the spec lacks.
    static func of(classID: UInt16) -> [AMQPPropertyPieces] {
        Int(classID) < byClass.count ? byClass[Int(classID)] ?? [] : []
    }

    private static let byClass = AMQPSpec.byClassID { cls in
        zip(cls.properties, AMQPContentHeaderDecoder.flagLines(classID: cls.id, properties: cls.properties))
            .map(AMQPPropertyPieces.init)
    }
}
