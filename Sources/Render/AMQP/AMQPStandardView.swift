import AMQP
import Dissection

/// The standard view of AMQP frames: the field tree and summary line that text and JSON print,
/// the values a table counts, and the connection's note as fields and words. The dissector asks
/// it through `AMQPFrameView`; `AMQPConnectionDissector(info:options:)` (here) hands it over.
package struct AMQPStandardView: AMQPFrameView {
    package init() {}

    package func pdu(of frame: AMQPDecodedFrame, requests: [AMQPMethodID: AMQPMethod], note: AMQPFrameNote,
                    options: AMQPOptions) -> DissectedPDU {
        var pdu = frame.dissected(options: options, requests: requests, note: note)
        // Words for the text line; JSON does not print them.
        if note.analysis, options.detail != .json {
            pdu.annotations += note.words(acknowledges: frame.method?.id == .basicAck)
        }
        return pdu
    }

    package func counted(_ frame: AMQPDecodedFrame, note: AMQPFrameNote) -> CountedPDU? { frame.counted(note) }

    package func propertySummary(of header: AMQPContentHeader) -> String { header.propertySummary }

    package func protocolHeader(_ bytes: ArraySlice<UInt8>, header: AMQPProtocolHeader?, problems: [Problem], refused: Bool) -> DissectedPDU {
        var fields = [Field("frame_type", "Type", .string("protocol_header"), range: 0..<bytes.count)]
        fields.append(Field("protocol", "Protocol", .string(AMQPText.shortString(bytes.prefix(4))), range: 0..<4))
        guard let header else {
            let summary = "protocol header (malformed)" + (refused ? " (server refuses the client's protocol version)" : "")
            return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems, wireLength: bytes.count)
        }
        let o = header.octets
        fields.append(Field("version", "Version", .string(String(header.versionName.dropFirst(5))),
                            line: "Version: \(header.versionName) (\(o.0) \(o.1) \(o.2) \(o.3))", range: 4..<8))
        var summary = "protocol header \(header.versionName)"
        if header.family == .amqp10 { summary += " (AMQP 1.0, not dissected)" }
        if refused { summary += " (server refuses the client's protocol version)" }
        return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems, wireLength: bytes.count)
    }

    package func unframed(_ count: Int, problems: [Problem]) -> DissectedPDU {
        // Text only: the count is the PDU's wire length, which JSON gives as the top-level
        // `length`; an `amqp.length` would repeat it under a name that means a body's length.
        let fields = [Field("frame_type", "Type", .string("unframed")),
                      Field("length", "Length", .int(count), textOnly: true)]
        let summary = problems.last?.message ?? "\(count) bytes not framed"
        return DissectedPDU(protocolName: "amqp", summary: summary, fields: fields, problems: problems, wireLength: count)
    }

    package func incompleteMessage(_ message: AMQPMessageAssembly, problem: Problem, options: AMQPOptions) -> DissectedPDU {
        DissectedPDU(protocolName: "amqp", summary: "incomplete message at end of stream",
                     fields: [Field("frame_type", "Type", .string("unframed")), message.field(options: options)],
                     problems: [problem], wireLength: 0)
    }

    /// A unit's PDU without connection state: a frame's typed values seen as their field tree,
    /// a protocol header or unframed bytes as theirs.
    static func dissect(_ unit: AMQPFramedUnit, options: AMQPOptions) -> DissectedPDU {
        let view = AMQPStandardView()
        switch unit {
        case .protocolHeader(let bytes, let problems):
            let header = AMQPProtocolHeader(bytes)
            return view.protocolHeader(bytes, header: header, problems: AMQPFrameDecoder.protocolHeaderProblems(header, problems: problems),
                                       refused: false)
        case .unframed(let count, let problems):
            return view.unframed(count, problems: problems)
        case .frame(let framed):
            var decoder = AMQPFrameDecoder(options: options)
            var decoded = decoder.decode(framed.frame, problems: framed.problems)
            decoded.summarizeProperties(with: view, options: options)
            return view.pdu(of: decoded, requests: [:], note: AMQPFrameNote(), options: options)
        }
    }
}

extension AMQPConnectionDissector {
    /// A dissector whose frames the standard view shows.
    public init(info: ConnectionInfo, options: AMQPOptions = AMQPOptions()) {
        self.init(info: info, options: options, view: AMQPStandardView())
    }
}

/// The decoder's forms that return a PDU: the typed values as the standard view shows them.
extension AMQPDecoder {
    /// Decodes one unit from an `AMQPFramer` on its own: no connection state, so no frame-max
    /// check, no message assembly and no request context for close explanations.
    public static func decode(_ unit: AMQPFramedUnit, options: AMQPOptions = AMQPOptions()) -> DissectedPDU {
        AMQPStandardView.dissect(unit, options: options)
    }

    /// Decodes the bytes of exactly one frame, header through frame-end. Missing bytes are
    /// reported as a truncated frame; bytes after the frame-end as a problem.
    public static func decode(frame bytes: ArraySlice<UInt8>, options: AMQPOptions = AMQPOptions()) -> DissectedPDU {
        var framer = AMQPFramer(options: options, atStreamStart: true)
        framer.append(bytes)
        var units: [AMQPFramedUnit] = []
        while case .unit(let unit) = framer.next() { units.append(unit) }
        units += framer.finish()
        guard let first = units.first else {
            return DissectedPDU(protocolName: "amqp", summary: "no bytes", fields: [], wireLength: 0)
        }
        var pdu = decode(first, options: options)
        if units.count > 1 {
            pdu.problems.append(Problem(.error, .trailingBytes, "\(bytes.count - pdu.wireLength) bytes follow the frame",
                                        reference: "AMQP 0-9-1 §4.2.3"))
        }
        return pdu
    }

    /// Decodes a byte stream of one direction: an optional protocol header, then frames.
    /// Messages are assembled as on a connection; the end of the bytes ends the stream.
    public static func decodeAll(_ bytes: [UInt8]) -> [DissectedPDU] {
        decodeAll(bytes, options: AMQPOptions())
    }

    /// `decodeAll` with options.
    public static func decodeAll(_ bytes: [UInt8], options: AMQPOptions) -> [DissectedPDU] {
        var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: false, serverPort: AMQPSpec.defaultPort),
                                                options: options, view: AMQPStandardView(), expectsProtocolHeader: false)
        var out: [DissectedPDU] = []
        dissector.receive(bytes[...], from: .toServer, into: &out)
        dissector.finish(.toServer, into: &out)
        return out
    }
}
