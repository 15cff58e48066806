/// Decodes one connection's two byte streams into PDUs.
///
/// The caller feeds each direction's bytes in order as they arrive (any split), reports
/// bytes the capture lost as gaps, and calls `finish` when the connection ends. PDUs come
/// out through `output` as soon as their last byte is in, so the caller can attribute them
/// to the packet that completed them.
public protocol StreamDissector {
    /// Ordered bytes of one direction.
    mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU])
    /// `count` bytes of one direction are missing (a lost segment, a truncated packet, a limit).
    mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU])
    /// The direction ended (FIN, RST, idle flush, end of capture): a PDU left incomplete is reported.
    mutating func finish(_ direction: Direction, into output: inout [DissectedPDU])
    /// `receive`, making at most `limit` PDUs now; true when the bytes hold more, which
    /// `receiveMore` makes. A segment of thousands of small PDUs (a burst of acknowledgements)
    /// is then dissected and handed on a part at a time: its PDUs are never all alive at once.
    mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool
    /// More PDUs from the bytes a limited `receive` was given, at most `limit`; true when there
    /// are more still. Called until false, before anything else is given to the dissector.
    mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool
    /// `receive(_:from:into:limit:)` into a batch: the PDUs a facts view makes (with
    /// `PDUDetail.facts`) come as `CountedPDU` values, not boxes, the rest as boxes, in order.
    /// The same PDUs, facts and problems as the array's form.
    mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool
    /// `receiveMore(from:into:limit:)` into a batch.
    mutating func receiveMore(from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool
    /// Whether a batch gets any counted PDUs from this dissector: a caller that would take
    /// them skips the batch otherwise (the boxes come as fast through an array).
    var makesCountedPDUs: Bool { get }

    /// Whether the dissector analyses sequences of PDUs (`locate`, `takeRecords`, `end`): a
    /// caller skips those calls otherwise.
    var analyses: Bool { get }
    /// Where the bytes given next were captured (the frame that completes a PDU, and its time):
    /// an analysis measures and links PDUs by them.
    mutating func locate(frame: Int, time: Timestamp)
    /// The analysis records found since the last call (after the PDUs that showed them).
    mutating func takeRecords(into records: inout [AnalysisRecord])
    /// The connection ended (`reason`, in words, at the place `locate` gave last): the records of
    /// what it left open, handed to `record` one at a time (a connection can leave thousands), and
    /// what the analysis makes of it.
    mutating func end(_ reason: String, record: (AnalysisRecord) -> Void) -> ConnectionAnalysis?
}

extension StreamDissector {
    /// Without a limit of its own: every PDU at once.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool {
        receive(bytes, from: direction, into: &output)
        return false
    }

    public mutating func receiveMore(from direction: Direction, into output: inout [DissectedPDU], limit: Int) -> Bool { false }

    /// Without a counted path of its own: none.
    public var makesCountedPDUs: Bool { false }

    /// Without an analysis of its own: none.
    public var analyses: Bool { false }
    public mutating func locate(frame: Int, time: Timestamp) {}
    public mutating func takeRecords(into records: inout [AnalysisRecord]) {}
    public mutating func end(_ reason: String, record: (AnalysisRecord) -> Void) -> ConnectionAnalysis? { nil }

    /// Without a counted path of its own: every PDU a box, from the array's form.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        output.appendingBoxes { receive(bytes, from: direction, into: &$0, limit: limit) }
    }

    public mutating func receiveMore(from direction: Direction, into output: inout PDUBatch, limit: Int) -> Bool {
        output.appendingBoxes { receiveMore(from: direction, into: &$0, limit: limit) }
    }
}

/// What a dissector is told about the connection when it is created.
public struct ConnectionInfo: Sendable {
    /// The capture did not show the connection's start: the first bytes may be inside a PDU.
    public var startedMidStream: Bool
    /// Server port, where known.
    public var serverPort: UInt16
    /// The connection's number in the run (`StreamContext.stream`).
    public var stream: Int

    public init(startedMidStream: Bool, serverPort: UInt16, stream: Int = 0) {
        self.startedMidStream = startedMidStream
        self.serverPort = serverPort
        self.stream = stream
    }
}
