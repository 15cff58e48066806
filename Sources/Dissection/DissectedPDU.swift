/// One protocol data unit, decoded: an MQTT control packet or an AMQP frame.
///
/// A value type whose parts live in one shared, copy-on-write box: a PDU is copied several times
/// on its way from a decoder to a renderer (into the decoder's output, into an event, out of it),
/// and copying one reference costs far less than retaining each string and array of the tree.
public struct DissectedPDU: Sendable {
    /// Written only while uniquely referenced (copy on write): no runtime exclusivity checks.
    @usableFromInline final class Storage: @unchecked Sendable {
        @usableFromInline @exclusivity(unchecked) var protocolName: String
        @usableFromInline @exclusivity(unchecked) var summary: String
        @usableFromInline @exclusivity(unchecked) var fields: [Field]
        @usableFromInline @exclusivity(unchecked) var problems: [Problem]
        @usableFromInline @exclusivity(unchecked) var wireLength: Int
        @usableFromInline @exclusivity(unchecked) var facts: PDUFacts?
        @usableFromInline @exclusivity(unchecked) var textTree: [UInt8]
        @usableFromInline @exclusivity(unchecked) var jsonTree: [UInt8]

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

        @usableFromInline func copy() -> Storage {
            Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                    wireLength: wireLength, facts: facts, textTree: textTree, jsonTree: jsonTree)
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
    /// The field tree, in wire order.
    @inlinable public var fields: [Field] {
        get { storage.fields }
        _modify { makeUnique(); yield &storage.fields }
    }
    @inlinable public var problems: [Problem] {
        get { storage.problems }
        _modify { makeUnique(); yield &storage.problems }
    }
    /// Bytes the PDU occupies on the wire (header included), whether or not all were captured.
    @inlinable public var wireLength: Int {
        get { storage.wireLength }
        set { makeUnique(); storage.wireLength = newValue }
    }
    /// What summaries count, set by a decoder's fast path (`PDUDetail.facts`), which then builds
    /// no field tree. Nil when the tree was built: `PDUFacts(deriving:)` reads them off it.
    @inlinable public var facts: PDUFacts? {
        get { storage.facts }
        _modify { makeUnique(); yield &storage.facts }
    }

    /// The field tree already written as text (`TextTree`: the root fields indented one level,
    /// each line ending in a newline), set by a decoder's text fast path (`PDUDetail.text`),
    /// which then builds no `fields`. Empty when `fields` holds the tree.
    @inlinable public var textTree: [UInt8] {
        get { storage.textTree }
        _modify { makeUnique(); yield &storage.textTree }
    }

    /// The field tree already written as JSON (`JSONTree`: the object of the fields, braces
    /// included), set by a decoder's JSON fast path (`PDUDetail.json`), which then builds no
    /// `fields`. Empty when `fields` holds the tree.
    @inlinable public var jsonTree: [UInt8] {
        get { storage.jsonTree }
        _modify { makeUnique(); yield &storage.jsonTree }
    }

    /// Adds fields after the tree's last: to `fields`; or, when the tree was written as text
    /// (`textTree`), as lines after its lines, with `style`; or, when it was written as JSON
    /// (`jsonTree`), as members before its closing brace. Written through `scratch` (emptied
    /// first). For what a connection adds to a PDU its decoder made (the queue a delivery came
    /// from, a confirm's number, a completed message).
    public mutating func appendFields(_ new: [Field], style: TextTree.Style, scratch: inout ByteSink) {
        guard !new.isEmpty else { return }
        if !storage.textTree.isEmpty {
            scratch.removeAll()
            TextTree.write(new, depth: 1, style: style, into: &scratch)
            textTree.append(contentsOf: scratch.bytes)
        } else if !storage.jsonTree.isEmpty {
            scratch.removeAll()
            var first = false
            JSONTree.writeMembers(new, first: &first, showSecrets: style.showSecrets, into: &scratch)
            guard !scratch.bytes.isEmpty else { return }
            jsonTree.removeLast() // the closing brace, written again after the new members
            jsonTree.append(contentsOf: scratch.bytes)
            jsonTree.append(UInt8(ascii: "}"))
        } else {
            fields += new
        }
    }

    /// Whether decoders spend work on the summary line's optional detail (an AMQP method's
    /// arguments, a body preview, content properties). Only text and JSON print summaries; a
    /// program that prints tables alone (proto-dissect does) turns this off once, before
    /// decoding, and summaries keep only the PDU's name. Default: on.
    @exclusivity(unchecked) nonisolated(unsafe) public static var buildsSummaries = true

    public init(protocolName: String, summary: String, fields: [Field], problems: [Problem] = [], wireLength: Int,
                facts: PDUFacts? = nil, textTree: [UInt8] = [], jsonTree: [UInt8] = []) {
        storage = Storage(protocolName: protocolName, summary: summary, fields: fields, problems: problems,
                          wireLength: wireLength, facts: facts, textTree: textTree, jsonTree: jsonTree)
    }

    /// The facts summaries count: those the decoder set, else those of the field tree.
    public var summaryFacts: PDUFacts { facts ?? PDUFacts(deriving: self) }

    /// The first field with this key anywhere in the tree.
    public func field(_ key: String) -> Field? {
        for field in storage.fields {
            if let found = field.find(key) { return found }
        }
        return nil
    }
}
