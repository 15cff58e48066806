import Dissection

/// A 5.0 property list (MQTT 5.0 §2.2.2): its length and the properties read, in wire order.
public struct MQTTProperties: Sendable {
    /// The property length and its bytes.
    public var length: Ranged<Int>
    public var entries: [MQTTProperty]
    /// The bytes read as the list, length included (up to where reading stopped).
    public var range: Range<Int>

    /// The first property with this identifier.
    public subscript(id: MQTTPropertyID) -> MQTTProperty? { entries.first { $0.id == id } }
}

/// One property: its identifier, value and bytes.
public struct MQTTProperty: Sendable {
    public enum Value: Sendable {
        /// Byte, Two and Four Byte Integers and Variable Byte Integers.
        case integer(Int)
        case string(String)
        case binary(ArraySlice<UInt8>)
        /// A User Property's name and value.
        case pair(name: Ranged<String>, value: Ranged<String>)
    }

    public var id: MQTTPropertyID
    public var value: Value
    public var range: Range<Int>
    /// Repeated where it may appear once (a problem; JSON keeps the first).
    public var isIllegalRepeat: Bool

    public var intValue: Int? {
        if case .integer(let v) = value { return v }
        return nil
    }
}
