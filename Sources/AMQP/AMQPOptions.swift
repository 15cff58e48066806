import Dissection

/// Limits and preview sizes of the AMQP decoder. Every limit is a setting.
public struct AMQPOptions: Sendable {
    /// Bytes of a message body (and of a body frame) shown as a preview. Default 256.
    public var bodyPreviewBytes = 256
    /// The most bytes of one frame held in memory; the rest of a larger frame is counted and
    /// skipped (a body frame still shows its preview). Default 1 MiB.
    public var maxHeldFrameBytes = 1 << 20
    /// How deep field tables and arrays may nest before the decoder stops descending and
    /// reports a problem. Default 64; values above 128 act as 128, so the decoder's
    /// recursion stays far from any thread's stack limit.
    public var maxFieldTableDepth = 64
    /// How many unacknowledged deliveries per channel are remembered to say which queue an
    /// ack, nack or reject settles. Further deliveries are not attributed. Default 65536.
    public var maxTrackedDeliveries = 65536
    /// Which view of each frame to hand on: the field tree (default, and for `.text` and `.json`),
    /// or with `.facts` the values a table counts for a frame with no problem (any other frame as
    /// its tree). Every frame is decoded the same way whatever the detail.
    public var detail: PDUDetail = .tree
    /// Whether summary lines carry their detail (a method's arguments, a header's body size and
    /// properties, a body's preview) or name the frame alone: a program that prints no summary
    /// (a table) skips making them. Default: on.
    public var summaryDetail = true
    /// Whether field trees carry their text lines (the bit-by-bit and annotated lines the text
    /// format prints, and field-table entries' typed labels): a program that prints JSON or
    /// tables alone skips making them. Default: on.
    public var textLines = true
    /// Whether each connection's deliveries and publishes are followed to their
    /// acknowledgements and confirms (`AMQPFrameNote`, the `unacknowledged`, `unconfirmed` and
    /// `prefetch_limited` records). Default: on.
    public var analysis = true
    /// In a run in two passes (`--two-pass`), what the first pass writes and the second reads:
    /// each publish's route and confirm, each delivery's acknowledgement (`AMQPLinks`).
    public var links: AMQPLinking?
    public init(bodyPreviewBytes: Int = 256, maxHeldFrameBytes: Int = 1 << 20, maxFieldTableDepth: Int = 64,
                maxTrackedDeliveries: Int = 65536) {
        self.bodyPreviewBytes = bodyPreviewBytes
        self.maxHeldFrameBytes = maxHeldFrameBytes
        self.maxFieldTableDepth = maxFieldTableDepth
        self.maxTrackedDeliveries = maxTrackedDeliveries
    }

    /// The depth cap actually applied.
    package var effectiveTableDepth: Int { min(max(maxFieldTableDepth, 0), 128) }
    /// Held bytes per frame: at least the 7-byte header's worth of payload so framing works.
    var effectiveMaxHeld: Int { max(maxHeldFrameBytes, 64) }
    /// Long strings inside arguments and tables are previewed to this many bytes.
    package static let longStringPreviewBytes = 1024
}
