import Dissection

/// Decoding AMQP 0-9-1 bytes you hold, without a capture, into typed values. Render's
/// `AMQPViews` adds the forms that return a `DissectedPDU` (one unit, one frame, a whole stream).
public enum AMQPDecoder {
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
