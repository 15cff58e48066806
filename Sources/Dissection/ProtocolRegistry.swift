/// Which dissector handles a connection: by server port, with user overrides (`--decode-as`).
public struct ProtocolRegistry {
    public typealias Factory = (ConnectionInfo) -> any StreamDissector

    private var byName: [String: Factory] = [:]
    private var ports: [UInt16: String] = [:]

    public init() {}

    /// Makes a protocol known under `name`, with its default ports.
    public mutating func register(_ name: String, ports defaultPorts: [UInt16], factory: @escaping Factory) {
        byName[name] = factory
        for p in defaultPorts { ports[p] = name }
    }

    /// Decodes traffic on `port` as `name` (replaces a default).
    public mutating func assign(port: UInt16, to name: String) -> Bool {
        guard byName[name] != nil else { return false }
        ports[port] = name
        return true
    }

    public var knownProtocols: [String] { byName.keys.sorted() }
    public var assignedPorts: [UInt16] { ports.keys.sorted() }

    /// The protocol name for a port, if any.
    public func protocolName(forPort port: UInt16) -> String? { ports[port] }

    public func makeDissector(named name: String, info: ConnectionInfo) -> (any StreamDissector)? {
        byName[name].map { $0(info) }
    }
}
