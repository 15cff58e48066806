import Dissection

/// Decoding AMQP 0-9-1 bytes you hold, without a capture: one frame, or a whole stream.
public enum AMQPDecoder {
    /// Decodes one unit from an `AMQPFramer` on its own: no connection state, so no frame-max
    /// check, no message assembly and no request context for close explanations.
    public static func decode(_ unit: AMQPFramedUnit, options: AMQPOptions = AMQPOptions()) -> DissectedPDU {
        AMQPFrameDecoder(options: options).dissect(unit)
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
                                                options: options, expectsProtocolHeader: false)
        var out: [DissectedPDU] = []
        dissector.receive(bytes[...], from: .toServer, into: &out)
        dissector.finish(.toServer, into: &out)
        return out
    }

    /// The method of a method frame, typed: the frame's bytes, header through frame-end, in;
    /// the method with every argument's byte range (offsets from the frame's first byte) and
    /// the problems of framing and decoding out. The method is nil when the bytes are not a
    /// method frame or end before its class and method ids; arguments the bytes did not reach
    /// are nil in its struct.
    public static func method(frame bytes: ArraySlice<UInt8>, options: AMQPOptions = AMQPOptions()) -> (method: AMQPMethod?, problems: [Problem]) {
        guard let (frame, problems) = firstFrame(bytes, options: options), frame.type == .method else { return (nil, []) }
        let result = AMQPMethodDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
        return (result.method, problems + result.problems)
    }

    /// The content header of a content header frame, typed, as `method(frame:options:)` gives
    /// a method: nil when the bytes are not a content header frame.
    public static func contentHeader(frame bytes: ArraySlice<UInt8>, options: AMQPOptions = AMQPOptions()) -> (header: AMQPContentHeader?, problems: [Problem]) {
        guard let (frame, problems) = firstFrame(bytes, options: options), frame.type == .header else { return (nil, []) }
        let result = AMQPContentHeaderDecoder(options: options).decode(frame.payload, isWhole: frame.isWhole)
        return (result.header, problems + result.problems)
    }

    /// The first frame the framer finds in `bytes`, with the problems around it.
    private static func firstFrame(_ bytes: ArraySlice<UInt8>, options: AMQPOptions) -> (AMQPRawFrame, [Problem])? {
        var framer = AMQPFramer(options: options, atStreamStart: true)
        framer.append(bytes)
        var units: [AMQPFramedUnit] = []
        if case .unit(let unit) = framer.next() { units.append(unit) } else { units += framer.finish() }
        guard case .frame(let framed)? = units.first else { return nil }
        return (framed.frame, framed.problems)
    }
}
