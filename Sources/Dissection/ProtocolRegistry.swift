/// Which dissector handles a connection: by server port, with user overrides (`--decode-as`).
public struct ProtocolRegistry {
    public typealias Factory = (ConnectionInfo) -> any StreamDissector

    private var byName: [String: Factory] = [:]
    private var ports: [UInt16: String] = [:]
    /// `ports`' keys, one bit each: `isAssigned(port:)` is asked per packet, where looking the
    /// port up in `ports` hashed it each time.
    private var portBits = [UInt64](repeating: 0, count: 1024)

    public init() {}

    /// Makes a protocol known under `name`, with its default ports.
    public mutating func register(_ name: String, ports defaultPorts: [UInt16], factory: @escaping Factory) {
        byName[name] = factory
        for p in defaultPorts { setPort(p, to: name) }
    }

    private mutating func setPort(_ port: UInt16, to name: String) {
        ports[port] = name
        portBits[Int(port >> 6)] |= 1 << UInt64(port & 63)
    }

    /// Decodes traffic on `port` as `name` (replaces a default).
    public mutating func assign(port: UInt16, to name: String) -> Bool {
        guard byName[name] != nil else { return false }
        setPort(port, to: name)
        return true
    }

    public var knownProtocols: [String] { byName.keys.sorted() }
    public var assignedPorts: [UInt16] { ports.keys.sorted() }

    /// The protocol name for a port, if any.
    public func protocolName(forPort port: UInt16) -> String? { ports[port] }

    /// Whether `port` has a protocol (`protocolName(forPort:)` is not nil), without a lookup.
    public func isAssigned(port: UInt16) -> Bool {
        portBits.withUnsafeBufferPointer { $0[Int(port >> 6)] >> UInt64(port & 63) & 1 == 1 }
    }

    /// Whether `makeDissector(named:info:)` makes one for `name`.
    public func hasDissector(named name: String) -> Bool { byName[name] != nil }

    public func makeDissector(named name: String, info: ConnectionInfo) -> (any StreamDissector)? {
        byName[name].map { $0(info) }
    }
}
