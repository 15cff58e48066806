/// How finely a capture records time.
public enum TimestampPrecision: Sendable {
    /// Milliseconds or coarser (a pcapng interface with `if_tsresol` 3 or less).
    case milliseconds
    case microseconds
    /// Nanoseconds, or anything finer than microseconds.
    case nanoseconds

    /// The precision of a clock ticking `unitsPerSecond` times a second: finer than
    /// microseconds counts as nanoseconds, finer than milliseconds as microseconds.
    public init(unitsPerSecond: UInt64) {
        self = unitsPerSecond > 1_000_000 ? .nanoseconds : unitsPerSecond > 1000 ? .microseconds : .milliseconds
    }

    /// Digits after the decimal point that show this precision: 3, 6 or 9.
    public var fractionalDigits: Int {
        switch self {
        case .milliseconds: return 3
        case .microseconds: return 6
        case .nanoseconds: return 9
        }
    }
}

/// One record of a capture: the only copy of the packet's bytes that the pipeline makes.
public struct CapturedPacket: Sendable {
    /// 1-based number of the record in its capture (Wireshark's frame number).
    public var number: Int
    public var seconds: Int64
    public var nanoseconds: UInt32
    public var precision: TimestampPrecision
    /// libpcap LINKTYPE_ value of the interface the packet was seen on.
    public var linkType: Int32
    /// Length of the packet on the wire; `bytes.count` may be less (snapshot length).
    public var originalLength: Int
    public var bytes: [UInt8]

    public init(number: Int, seconds: Int64, nanoseconds: UInt32, precision: TimestampPrecision,
                linkType: Int32, originalLength: Int, bytes: [UInt8]) {
        self.number = number
        self.seconds = seconds
        self.nanoseconds = nanoseconds
        self.precision = precision
        self.linkType = linkType
        self.originalLength = originalLength
        self.bytes = bytes
    }

    /// A packet of no bytes, to be overwritten (`PacketSource.next(into:)`).
    public static var empty: CapturedPacket {
        CapturedPacket(number: 0, seconds: 0, nanoseconds: 0, precision: .microseconds, linkType: 1, originalLength: 0, bytes: [])
    }

    /// Capture time in seconds, for timeouts and durations.
    public var time: Double { Double(seconds) + Double(nanoseconds) / 1e9 }
    public var isTruncated: Bool { bytes.count < originalLength }
}

/// Something that yields captured packets in order: a file, standard input, a live interface.
public protocol PacketSource {
    /// The next packet; nil at the end. Throws `CaptureError` when the input is unreadable or
    /// cut off; packets returned before stay valid.
    mutating func next() throws -> CapturedPacket?
    /// `next`, written into `packet` (returning true) rather than returned as an optional: the
    /// pipeline reads every packet this way (an optional packet was destroyed through the
    /// runtime's generic witnesses, per packet). The default calls `next`.
    mutating func next(into packet: inout CapturedPacket) throws -> Bool
    /// A name for messages (the file path, `standard input`, or the interface).
    var name: String { get }
}

extension PacketSource {
    public mutating func next(into packet: inout CapturedPacket) throws -> Bool {
        guard let next = try next() else { return false }
        packet = next
        return true
    }
}

/// Input that cannot be read, named with the file and what is wrong.
public struct CaptureError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// Cannot open, or not a capture at all.
        case unreadable
        /// A record is cut off or its header is nonsense: what came before is good.
        case cutShort
        case permission
        case noSuchInterface
        case filter
        /// An output file (`PcapWriter`) cannot be created or written.
        case unwritable
    }
    public var kind: Kind
    public var source: String
    public var message: String

    public init(_ kind: Kind, source: String, _ message: String) {
        self.kind = kind
        self.source = source
        self.message = message
    }

    public var description: String { "\(source): \(message)" }
}
