/// One protocol data unit, decoded: an MQTT control packet or an AMQP frame.
///
/// A value type whose parts live in one shared, copy-on-write box: a PDU is copied several times
/// on its way from a decoder to a renderer (into the decoder's output, into an event, out of it),
/// and copying one reference costs far less than retaining each string and array of the tree.
public struct DissectedPDU: Sendable {
    /// Which tree a written fast path wrote.
    public enum WrittenTree: Sendable {
        case none
        /// `textTree`: `TextTree`'s lines.
        case text
        /// `jsonTree`: the object of the fields.
        case json
    }

    /// Written only while uniquely referenced (copy on write): no runtime exclusivity checks.
    ///
    /// A written fast path's tree (`textTree`, `jsonTree`) and summary line are kept as bytes in
    /// one buffer of the box (`tail`): one allocation for both, where an array and a String (made
    /// from bytes, which validates them) cost two to make and two to free. The array and the
    /// String are made only when asked for, or when the part is changed.
    // Unchecked: written only while uniquely referenced (copy on write), so never while shared.
    @usableFromInline final class Storage: @unchecked Sendable {
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var protocolName: String
        /// Unused while the summary is in the tail (`summaryCount` > 0).
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
        /// Unused while the tree is in the tail (`tailTree` is not `.none`).
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var textTree: [UInt8]
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var jsonTree: [UInt8]
        /// The summary's UTF-8 (bytes 0..<summaryCount), then a written tree (`treeCount` bytes
        /// from `treeStart`); nil when neither is kept here.
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var tail: UnsafeMutablePointer<UInt8>?
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var summaryCount = 0
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var tailTree = WrittenTree.none
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var treeStart = 0
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var treeCount = 0
        /// Bytes allocated at `tail` (a box reused from the pool keeps its buffer).
        // Written only while uniquely referenced (copy on write): no other value can read it meanwhile.
        @usableFromInline @exclusivity(unchecked) var tailCapacity = 0

        @usableFromInline init(protocolName: String, summary: String, fields: [Field], problems: [Problem],
                               wireLength: Int, facts: PDUFacts?, textTree: [UInt8], jsonTree: [UInt8]) {
            self.protocolName = protocolName
            self.summary = summary
            self.fields = fields
            self.problems = problems
            self.wireLength = wireLength
            self.facts = facts
            self.textTree = textTree
            self.jsonTree = jsonTree
        }

        deinit { tail?.deallocate() }

        /// Makes a box from the pool hold what a new one would: no fields, problems, facts or
        /// trees, nothing in the tail (whose buffer is kept). With `keepingFacts`, the facts are
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
            if !textTree.isEmpty { textTree = [] }
            if !jsonTree.isEmpty { jsonTree = [] }
            summaryCount = 0
            tailTree = .none
            treeStart = 0
            treeCount = 0
        }

        /// Makes room for `count` bytes in the tail (its content is not kept).
        @usableFromInline func reserveTail(_ count: Int) {
            guard tailCapacity < count else { return }
            tail?.deallocate()
            tail = .allocate(capacity: count)
            tailCapacity = count
        }

        /// The tail tree with its last `droppingLast` bytes replaced by `adding`, then `then`.
        @usableFromInline func growTail(droppingLast: Int, adding: UnsafeBufferPointer<UInt8>, then: UInt8?) {
            let kept = tailCount - droppingLast
            let count = kept + adding.count + (then == nil ? 0 : 1)
            if count > tailCapacity || tail == nil {
                // Rounded up: a box goes back to the pool with its buffer, and the next PDUs grow too.
                let capacity = max(count, 2 * tailCapacity)
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
                if let tail { grown.update(from: tail, count: kept) }
                tail?.deallocate()
                tail = grown
                tailCapacity = capacity
            }
            if let from = adding.baseAddress { (tail! + kept).update(from: from, count: adding.count) }
            if let then { tail![count - 1] = then }
            treeCount += count - tailCount
        }

        /// Tail bytes in use.
        @usableFromInline var tailCount: Int { tailTree == .none ? summaryCount : treeStart + treeCount }

        @usableFromInline func copy() -> Storage {
            let copy = Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                               wireLength: wireLength, facts: facts, textTree: textTree, jsonTree: jsonTree)
            copy.packet = packet
            copy.annotations = annotations
            let count = tailCount
            if let tail, count > 0 {
                copy.tail = .allocate(capacity: count)
                copy.tailCapacity = count
                copy.tail!.update(from: tail, count: count)
                copy.summaryCount = summaryCount
                copy.tailTree = tailTree
                copy.treeStart = treeStart
                copy.treeCount = treeCount
            }
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
        get {
            let h = storage
            guard h.summaryCount > 0 else { return h.summary }
            return String(decoding: UnsafeBufferPointer(start: h.tail, count: h.summaryCount), as: UTF8.self)
        }
        _modify {
            makeUnique()
            let h = storage
            if h.summaryCount > 0 {
                h.summary = String(decoding: UnsafeBufferPointer(start: h.tail, count: h.summaryCount), as: UTF8.self)
                h.summaryCount = 0
            }
            yield &h.summary
        }
    }
    /// Calls `body` with the summary's UTF-8, without making a String when it is kept as bytes.
    @inlinable public func withSummaryBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let h = storage
        if h.summaryCount > 0 {
            return try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: h.tail, count: h.summaryCount)) }
        }
        var text = h.summary
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

    /// What summaries count, set by a decoder's fast path (`PDUDetail.facts`), which then builds
    /// no field tree. Nil when the tree was built: `PDUFacts(deriving:)` reads them off it.
    @inlinable public var facts: PDUFacts? {
        get { storage.facts }
        _modify { makeUnique(); yield &storage.facts }
    }

    /// The field tree already written as text (`TextTree`: the root fields indented one level,
    /// each line ending in a newline), set by a decoder's text fast path (`PDUDetail.text`),
    /// which then builds no `fields`. Empty when `fields` holds the tree. (Renderers read it
    /// with `withTextTreeBytes`, which makes no array.)
    @inlinable public var textTree: [UInt8] {
        get { storage.tailTree == .text ? Array(tailTreeBytes) : storage.textTree }
        _modify {
            materialize(.text)
            yield &storage.textTree
        }
    }

    /// The field tree already written as JSON (`JSONTree`: the object of the fields, braces
    /// included), set by a decoder's JSON fast path (`PDUDetail.json`), which then builds no
    /// `fields`. Empty when `fields` holds the tree. (Renderers read it with
    /// `withJSONTreeBytes`, which makes no array.)
    @inlinable public var jsonTree: [UInt8] {
        get { storage.tailTree == .json ? Array(tailTreeBytes) : storage.jsonTree }
        _modify {
            materialize(.json)
            yield &storage.jsonTree
        }
    }

    /// Makes the box this value's own and, when it keeps a tree of `format` in its buffer, moves
    /// that tree into its array (`textTree` or `jsonTree`), which is about to be changed.
    @inlinable mutating func materialize(_ format: WrittenTree) {
        makeUnique()
        guard storage.tailTree == format else { return }
        let bytes = Array(tailTreeBytes)
        if format == .text { storage.textTree = bytes } else { storage.jsonTree = bytes }
        storage.tailTree = .none
    }

    /// The tree's bytes in the tail (valid while `storage` lives).
    @inlinable var tailTreeBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage.tail! + storage.treeStart, count: storage.treeCount)
    }

    /// Whether the tree was written as text (`textTree` is not empty).
    @inlinable public var hasTextTree: Bool { storage.tailTree == .text || !storage.textTree.isEmpty }
    /// Whether the tree was written as JSON (`jsonTree` is not empty).
    @inlinable public var hasJSONTree: Bool { storage.tailTree == .json || !storage.jsonTree.isEmpty }

    /// Calls `body` with `textTree`'s bytes, without making an array when they are kept in the box.
    @inlinable public func withTextTreeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if storage.tailTree == .text { return try withExtendedLifetime(storage) { try body(tailTreeBytes) } }
        return try storage.textTree.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with `jsonTree`'s bytes, without making an array when they are kept in the box.
    @inlinable public func withJSONTreeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if storage.tailTree == .json { return try withExtendedLifetime(storage) { try body(tailTreeBytes) } }
        return try storage.jsonTree.withUnsafeBufferPointer(body)
    }

    /// Adds fields after the tree's last: to `fields`; or, when the tree was written as text
    /// (`textTree`), as lines after its lines, with `style`; or, when it was written as JSON
    /// (`jsonTree`), as members before its closing brace. Written through `scratch` (emptied
    /// first). For what a connection adds to a PDU its decoder made (the queue a delivery came
    /// from, a confirm's number, a completed message).
    public mutating func appendFields(_ new: [Field], style: TextTree.Style, scratch: inout ByteSink) {
        guard !new.isEmpty else { return }
        if hasTextTree {
            scratch.removeAll()
            TextTree.write(new, depth: 1, style: style, into: &scratch)
            appendTextLines(scratch.bytes)
        } else if hasJSONTree {
            scratch.removeAll()
            var first = false
            JSONTree.writeMembers(new, first: &first, showSecrets: style.showSecrets, into: &scratch)
            guard !scratch.bytes.isEmpty else { return }
            if storage.tailTree == .json {
                makeUnique()
                storage.growTail(droppingLast: 1, adding: scratch.bytes, then: UInt8(ascii: "}"))
                return
            }
            jsonTree.removeLast() // the closing brace, written again after the new members
            jsonTree.append(contentsOf: scratch.bytes)
            jsonTree.append(UInt8(ascii: "}"))
        } else {
            fields += new
        }
    }

    /// Adds lines already written as text (`TextTree`'s form) after the text tree's lines, in
    /// the box's buffer when the tree is kept there (no array is made).
    public mutating func appendTextLines(_ lines: UnsafeBufferPointer<UInt8>) {
        guard !lines.isEmpty else { return }
        if storage.tailTree == .text {
            makeUnique()
            storage.growTail(droppingLast: 0, adding: lines, then: nil)
        } else {
            textTree.append(contentsOf: lines)
        }
    }

    public init(protocolName: String, summary: String, fields: [Field], problems: [Problem] = [], wireLength: Int,
                facts: PDUFacts? = nil, textTree: [UInt8] = [], jsonTree: [UInt8] = []) {
        storage = Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                          wireLength: wireLength, facts: facts, textTree: textTree, jsonTree: jsonTree)
    }

    /// A PDU a written fast path made: its tree `tree` written as `format` (`.text` or `.json`),
    /// and its summary line as UTF-8 bytes (`summaryBytes`) or as `summary`. Both are copied
    /// into the box.
    public init(protocolName: __shared String, summary: __shared String = "", summaryBytes: UnsafeBufferPointer<UInt8>? = nil,
                writtenTree tree: UnsafeBufferPointer<UInt8>, format: WrittenTree, wireLength: Int) {
        let summaryCount = summaryBytes?.count ?? 0
        storage = Self.emptyBox(protocolName: protocolName, summary: summaryCount > 0 ? "" : summary, wireLength: wireLength)
        let treeCount = format == .none ? 0 : tree.count
        guard summaryCount + treeCount > 0 else { return }
        storage.reserveTail(summaryCount + treeCount)
        let tail = storage.tail!
        if summaryCount > 0, let from = summaryBytes?.baseAddress { tail.update(from: from, count: summaryCount) }
        if treeCount > 0, let from = tree.baseAddress { (tail + summaryCount).update(from: from, count: treeCount) }
        storage.summaryCount = summaryCount
        storage.tailTree = format
        storage.treeStart = summaryCount
        storage.treeCount = treeCount
    }

    /// A PDU a facts fast path made (`PDUDetail.facts`): no tree, the summary `summary`, and
    /// facts of kind `kind` (`PDUFacts(kind:)`), which the caller then adds to through `facts`.
    /// The box, and the facts' box, come from the pool when it has one: a box and its facts
    /// cost four allocations and frees a PDU otherwise.
    public init(protocolName: __shared String, summary: __shared String, wireLength: Int, kind: __shared String) {
        storage = Self.emptyBox(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: true)
        if storage.facts == nil { storage.facts = PDUFacts(kind: kind) } else { storage.facts!.reset(kind: kind) }
    }

    /// A PDU a facts fast path made with facts it shares (one value per packet type: facts are
    /// copy on write, and a box of facts is several hundred bytes, too many to make per
    /// acknowledgement when a segment carries thousands). The box comes from the pool when it
    /// has one.
    public init(protocolName: __shared String, summary: __shared String, wireLength: Int, sharedFacts facts: PDUFacts) {
        storage = Self.emptyBox(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: true)
        storage.facts = facts
    }

    /// A box from this thread's pool, made to hold what a new one would (`Storage.reuse`), or a new
    /// one: no fields, problems, trees or tail bytes, and no facts (unless `keepingFacts`, which
    /// leaves a pooled box's facts for the caller to reset or replace).
    private static func emptyBox(protocolName: __shared String, summary: __shared String, wireLength: Int,
                                 keepingFacts: Bool = false) -> Storage {
        if let spare = PDUPool.take() {
            spare.reuse(protocolName: protocolName, summary: summary, wireLength: wireLength, keepingFacts: keepingFacts)
            return spare
        }
        return Storage(protocolName: protocolName, summary: summary, fields: [], problems: [],
                       wireLength: wireLength, facts: nil, textTree: [], jsonTree: [])
    }

    /// The facts summaries count: those the decoder set, else those of the field tree.
    public var summaryFacts: PDUFacts { facts ?? PDUFacts(deriving: self) }

    /// The first field with this key anywhere in the tree.
    public func field(_ key: String) -> Field? {
        Field.find(key, in: storage.fields)
    }
}
