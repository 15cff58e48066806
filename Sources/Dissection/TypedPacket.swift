/// A decoder's typed value of one PDU (MQTT's `MQTTPacket`), carried on its `DissectedPDU`:
/// what a library user reads instead of the field tree, with the bytes it was read from.
public protocol TypedPacket: Sendable {
    /// The PDU's held bytes from its first byte: all of it, or the prefix the capture kept.
    var bytes: ArraySlice<UInt8> { get }
    /// Bytes the PDU occupies on the wire (more than `bytes` when it was cut short).
    var wireLength: Int { get }
}
