import Dissection

// What the text and JSON renderers share: how a renderer's staging sink meets the caller's
// output, and the context bytes reused from PDU to PDU.

extension ByteSink {
    /// Lets `write` append to `bytes` through `sink`, emptied first and kept from call to call:
    /// one copy of the output per call.
    static func borrowing(_ bytes: inout [UInt8], reusing sink: ByteSink, _ write: (inout ByteSink) -> Void) {
        var sink = sink
        sink.removeAll()
        write(&sink)
        bytes.append(contentsOf: sink.bytes)
    }

    /// The text that `write` makes, for renderers asked for a String.
    static func text(_ write: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        write(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The bytes a renderer wrote for the last PDU's context, and the context they were written for.
/// The PDUs one segment completes share their frame, time, stream and direction, so they share
/// these bytes.
struct ContextCache {
    private var key: StreamContext?
    private var bytes: [UInt8] = []

    /// Writes the bytes kept, if they were written for `ctx`; false otherwise.
    func write(_ ctx: StreamContext, into out: inout ByteSink) -> Bool {
        guard let key, key.frame == ctx.frame, key.stream == ctx.stream, key.time == ctx.time,
              key.endpoints.same(as: ctx.endpoints) else { return false }
        bytes.withUnsafeBufferPointer { out.append(bytes: $0) }
        return true
    }

    /// Keeps `written`, the bytes just written for `ctx`.
    mutating func keep(_ ctx: StreamContext, _ written: Slice<UnsafeBufferPointer<UInt8>>) {
        key = ctx
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: written)
    }
}
