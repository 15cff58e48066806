import Dissection

/// CONNECT (MQTT 5.0 §3.1, 3.1.1 §3.1). Its fields (`Fields`) are read as the packet's own
/// (`connect.clientID`, `connect.cleanStart`).
///
/// The fields are held in a box of their own: a packet's content is an enum as large as its largest
/// case, and a CONNECT's dozen optionals inline made every packet's content 417 bytes, copied and
/// destroyed with each packet (a PUBLISH's is 209).
@dynamicMemberLookup
public struct MQTTConnect: Sendable {
    /// The fields of a CONNECT, in wire order, each with its byte range.
    public struct Fields: Sendable {
        public var protocolName: Ranged<String>?
        /// The protocol level (3: 3.1, 4: 3.1.1, 5: 5.0).
        public var level: Ranged<UInt8>?
        public var flags: Ranged<UInt8>?
        public var keepAlive: Ranged<UInt16>?
        public var properties: MQTTProperties?
        public var clientID: Ranged<String>?
        public var willProperties: MQTTProperties?
        public var willTopic: Ranged<String>?
        public var willPayload: Ranged<ArraySlice<UInt8>>?
        public var username: Ranged<String>?
        /// A credential: views hide it unless asked.
        public var password: Ranged<ArraySlice<UInt8>>?

        public init() {}

        /// The version the level announces.
        public var announcedVersion: MQTTVersion? { level.flatMap { MQTTVersion(level: Int($0.value)) } }
        private func flag(_ mask: UInt8) -> Bool { (flags?.value ?? 0) & mask != 0 }
        public var usernameFlag: Bool { flag(0x80) }
        public var passwordFlag: Bool { flag(0x40) }
        public var willRetain: Bool { flag(0x20) }
        public var willQoS: Int { Int(((flags?.value ?? 0) >> 3) & 0b11) }
        public var willFlag: Bool { flag(0x04) }
        /// Clean Session (3.x) or Clean Start (5.0).
        public var cleanStart: Bool { flag(0x02) }
        public var reservedFlag: Bool { flag(0x01) }
    }

    @usableFromInline final class Storage: Sendable {
        @usableFromInline let fields: Fields
        @usableFromInline init(_ fields: Fields) { self.fields = fields }
    }

    @usableFromInline var storage: Storage

    public init() { storage = Storage(Fields()) }

    public init(_ fields: Fields) { storage = Storage(fields) }

    /// All the fields at once.
    public var fields: Fields {
        get { storage.fields }
        set { storage = Storage(newValue) }
    }

    /// Inlinable: a reader in another module then reads the one field where it lies; called,
    /// the key path was applied at run time (callgrind, fleet capture: 930 instructions a read).
    @inlinable public subscript<T>(dynamicMember path: KeyPath<Fields, T>) -> T { storage.fields[keyPath: path] }

    /// A field changed: the fields are copied into a new box (a CONNECT is changed by its decoder
    /// alone, and that fills `Fields` first).
    @inlinable public subscript<T>(dynamicMember path: WritableKeyPath<Fields, T>) -> T {
        get { storage.fields[keyPath: path] }
        set {
            var fields = storage.fields
            fields[keyPath: path] = newValue
            storage = Storage(fields)
        }
    }
}

/// CONNACK (MQTT 5.0 §3.2, 3.1.1 §3.2, 3.1 §3.2).
public struct MQTTConnack: Sendable {
    /// The acknowledge flags (3.1: a reserved byte).
    public var flags: Ranged<UInt8>?
    /// The return code (3.x) or reason code (5.0).
    public var code: Ranged<UInt8>?
    public var properties: MQTTProperties?

    public init() {}

    /// Session Present (never in 3.1, whose first byte is reserved).
    public func sessionPresent(in version: MQTTVersion) -> Bool {
        version != .v3_1 && (flags?.value ?? 0) & 0x01 != 0
    }
}
