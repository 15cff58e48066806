/// One protocol data unit, decoded: an MQTT control packet or an AMQP frame.
///
/// A value type whose parts live in one shared, copy-on-write box: a PDU is copied several times
/// on its way from a decoder to a renderer (into the decoder's output, into an event, out of it),
/// and copying one reference costs far less than retaining each string and array of the tree.
public struct DissectedPDU: Sendable {
    /// Written only while uniquely referenced (copy on write): no runtime exclusivity checks.
    // Unchecked: written only while uniquely referenced (copy on write), so never while shared.
    @usableFromInline final class Storage: @unchecked Sendable {
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var protocolName: String
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var summary: String
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var fields: [Field]
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var problems: [Problem]
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var wireLength: Int
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var facts: PDUFacts?
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var packet: (any TypedPacket)?
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var annotations: [String] = []
        @usableFromInline init(protocolName: String, summary: String, fields: [Field], problems: [Problem],
                               wireLength: Int, facts: PDUFacts?) {
            self.protocolName = protocolName
            self.summary = summary
            self.fields = fields
            self.problems = problems
            self.wireLength = wireLength
            self.facts = facts
        }

        /// Makes a box from the pool hold what a new one would: no fields, problems or facts. With `keepingFacts`, the facts are
        /// left for the caller to reset (their box is reused too).
        @usableFromInline func reuse(protocolName: String, summary: String, wireLength: Int, keepingFacts: Bool = false) {
            // Compared first: the same name (a literal, most often) is not stored again, which
            // would release the old and retain the new.
            if self.protocolName != protocolName { self.protocolName = protocolName }
            if !(summary.isEmpty && self.summary.isEmpty) { self.summary = summary }
            if !fields.isEmpty { fields = [] }
            if !problems.isEmpty { problems = [] }
            self.wireLength = wireLength
            if !keepingFacts, facts != nil { facts = nil }
            if packet != nil { packet = nil }
            if !annotations.isEmpty { annotations = [] }
        }

        @usableFromInline func copy() -> Storage {
            let copy = Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                               wireLength: wireLength, facts: facts)
            copy.packet = packet
            copy.annotations = annotations
            return copy
        }
    }

    @usableFromInline var storage: Storage

    /// Makes the box this value's own before a write.
    @inlinable @inline(__always)
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    /// The protocol's short name, e.g. `mqtt`; also the JSON object key for `fields`.
    @inlinable public var protocolName: String {
        get { storage.protocolName }
        set { makeUnique(); storage.protocolName = newValue }
    }
    /// One line, e.g. `PUBLISH id=7 QoS 1 sensors/kitchen/temp (4 bytes)`.
    @inlinable public var summary: String {
        get { storage.summary }
        _modify { makeUnique(); yield &storage.summary }
    }
    /// Calls `body` with the summary's UTF-8.
    @inlinable public func withSummaryBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var text = storage.summary
        return try text.withUTF8(body)
    }
    /// The field tree, in wire order.
    @inlinable public var fields: [Field] {
        get { storage.fields }
        _modify { makeUnique(); yield &storage.fields }
    }
    @inlinable public var problems: [Problem] {
        get { storage.problems }
        _modify { makeUnique(); yield &storage.problems }
    }
    /// What an analysis of the connection says of this PDU, in words (`acknowledges #8 in
    /// 61 µs`): text shows each in brackets after the summary; the analysis puts its values in
    /// the field tree as well (MQTT's `flow`).
    @inlinable public var annotations: [String] {
        get { storage.annotations }
        _modify { makeUnique(); yield &storage.annotations }
    }
    /// How many problems (read in the box: no array is handed out).
    @inlinable public var problemCount: Int { storage.problems.count }
    /// Whether the protocol's short name is `name`.
    @inlinable public func isProtocol(_ name: String) -> Bool { storage.protocolName == name }
    /// Bytes the PDU occupies on the wire (header included), whether or not all were captured.
    @inlinable public var wireLength: Int {
        get { storage.wireLength }
        set { makeUnique(); storage.wireLength = newValue }
    }
    /// The decoder's typed value of this PDU (an `MQTTPacket`), with the bytes it was read
    /// from; nil where the decoder has none yet.
    public var packet: (any TypedPacket)? {
        get { storage.packet }
        set {
            makeUnique()
            storage.packet = newValue
        }
    }

    /// What summaries count, set by a decoder's facts view (`PDUDetail.facts`), which then builds
    /// no field tree. Nil when the tree was built: `PDUFacts(deriving:)` reads them off it.
    @inlinable public var facts: PDUFacts? {
        get { storage.facts }
        _modify { makeUnique(); yield &storage.facts }
    }

    public init(protocolName: String, summary: String, fields: [Field], problems: [Problem] = [], wireLength: Int,
                facts: PDUFacts? = nil) {
        storage = Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                          wireLength: wireLength, facts: facts)
    }

    /// A PDU a facts view made (`PDUDetail.facts`): no tree, the summary `summary`, and
    /// facts of kind `kind` (`PDUFacts(kind:)`), which the caller then adds to through `facts`.
    /// The box, and the facts' box, come from the pool when it has one: a box and its facts
    /// cost four allocations and frees a PDU otherwise.
    public init(protocolName: __shared String, summary: __shared String, wireLength: Int, kind: __shared String) {
        storage = Self.emptyBox(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: true)
        if storage.facts == nil { storage.facts = PDUFacts(kind: kind) } else { storage.facts!.reset(kind: kind) }
    }

    /// A PDU a facts view made with facts it shares (one value per packet type: facts are
    /// copy on write, and a box of facts is several hundred bytes, too many to make per
    /// acknowledgement when a segment carries thousands). The box comes from the pool when it
    /// has one.
    public init(protocolName: __shared String, summary: __shared String, wireLength: Int, sharedFacts facts: PDUFacts) {
        storage = Self.emptyBox(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: true)
        storage.facts = facts
    }

    /// A box from this thread's pool, made to hold what a new one would (`Storage.reuse`), or a new
    /// one: no fields or problems, and no facts (unless `keepingFacts`, which
    /// leaves a pooled box's facts for the caller to reset or replace).
    private static func emptyBox(protocolName: __shared String, summary: __shared String, wireLength: Int,
                                 keepingFacts: Bool = false) -> Storage {
        if let spare = PDUPool.take() {
            spare.reuse(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: keepingFacts)
            return spare
        }
        return Storage(protocolName: protocolName, summary: summary, fields: [], problems: [],
                       wireLength: wireLength, facts: nil)
    }

    /// The facts summaries count: those the decoder set, else those of the field tree.
    public var summaryFacts: PDUFacts { facts ?? PDUFacts(deriving: self) }

    /// The first field with this key anywhere in the tree.
    public func field(_ key: String) -> Field? {
        Field.find(key, in: storage.fields)
    }
}
