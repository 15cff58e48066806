/// Passes packets through from another source while writing each one to a pcap file (`-w`).
public struct RecordingSource<Base: PacketSource>: PacketSource {
    private var base: Base
    private let writer: PcapWriter

    public init(_ base: Base, writer: PcapWriter) {
        self.base = base
        self.writer = writer
    }

    public var name: String { base.name }

    public mutating func next() throws -> CapturedPacket? {
        guard let packet = try base.next() else {
            try writer.flush()
            return nil
        }
        try writer.write(packet)
        return packet
    }
}
