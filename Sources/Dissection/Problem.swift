/// Something wrong with the bytes: a spec violation, a truncation, a gap.
/// It is attached to the PDU (or stream) it concerns; it never stops the run.
public struct Problem: Sendable, Equatable {
    public enum Severity: String, Sendable {
        /// The bytes break a rule of the protocol.
        case error
        /// Legal but suspicious, or something the capture lost.
        case warning
        case note
    }

    public var severity: Severity
    /// A short machine code, e.g. `reserved-flags` (`ProblemCode` lists them).
    public var code: ProblemCode
    /// Plain words: what is wrong.
    public var message: String
    /// The rule broken, e.g. `MQTT 5.0 §3.3.1.2`.
    public var reference: String?
    /// Offsets within the PDU, where known.
    public var range: Range<Int>?

    public init(_ severity: Severity, _ code: ProblemCode, _ message: String, reference: String? = nil, range: Range<Int>? = nil) {
        self.severity = severity
        self.code = code
        self.message = message
        self.reference = reference
        self.range = range
    }

    /// `message (reference)`.
    public var description: String {
        if let reference { return "\(message) [\(reference)]" }
        return message
    }
}

extension Array where Element == Problem {
    /// Appends `other`: nothing, not even the call, when it holds none, as the problems a decoder
    /// found in a frame mostly do (`append(contentsOf:)` of an empty array cost about 145
    /// instructions, for two or three per AMQP frame).
    @inlinable
    public static func += (problems: inout [Problem], other: [Problem]) {
        if !other.isEmpty { problems.append(contentsOf: other) }
    }
}
