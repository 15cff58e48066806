import Dissection

/// What one direction of a connection remembers between packets (MQTT 5.0 topic aliases).
///
/// Each direction has its own alias map (MQTT 5.0 §3.3.2.3.4: "Topic Alias mappings exist
/// only within a Network Connection and apply in one direction").
public struct MQTTDirectionState: Sendable {
    /// Alias → topic name, as set by PUBLISH packets of this direction.
    public var topicAliases: [Int: String] = [:]
    /// The most aliases the receiver accepts in this direction (Topic Alias Maximum of the
    /// receiver's CONNECT or CONNACK); nil while not seen.
    public var topicAliasMaximum: Int?
    /// Topic names this direction published to lately: a PUBLISH to one of them takes the kept
    /// String instead of validating and copying its bytes again.
    var recentTopics = RecentStrings()

    public init() {}
}

/// How a connection's version became known.
public enum MQTTVersionSource: Sendable, Equatable {
    /// From the connection's CONNECT.
    case connect
    /// From the user (`MQTTOptions.assumedVersion`).
    case assumed
    /// Guessed from packets that parse cleanly only in that version.
    case guessed
}

/// A connection's session: its version and both directions' state.
public struct MQTTSession: Sendable {
    public var version: MQTTVersion?
    public var versionSource: MQTTVersionSource?
    /// A CONNECT has been seen on this connection.
    public var sawConnect = false
    public var toServer = MQTTDirectionState()
    public var toClient = MQTTDirectionState()

    public init(version: MQTTVersion? = nil, source: MQTTVersionSource? = nil) {
        self.version = version
        self.versionSource = version == nil ? nil : (source ?? .assumed)
    }

    public subscript(direction: Direction) -> MQTTDirectionState {
        get { direction == .toServer ? toServer : toClient }
        set {
            if direction == .toServer { toServer = newValue } else { toClient = newValue }
        }
    }
}
