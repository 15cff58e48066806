/// Which way bytes flow in a connection, as far as the protocol is concerned.
public enum Direction: Sendable, Hashable {
    /// From the side that opened the connection (the client) to the server.
    case toServer
    /// From the server back to the client.
    case toClient

    public var reversed: Direction { self == .toServer ? .toClient : .toServer }
}
