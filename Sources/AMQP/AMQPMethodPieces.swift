import Dissection

/// What the text fast path writes around a frequent method's argument values, made once per
/// method of the spec as immortal bytes: the lines before the arguments (class, method id, name:
/// each a table lookup and a String append per frame), each argument's line up to its value, and
/// each bit argument's two possible lines.
struct AMQPMethodPieces {
    /// The spec these pieces were made from (a method spec made elsewhere has none).
    unowned(unsafe) let spec: AMQPMethodSpec
    /// `    Class: basic (60)`, `    Method-Id: publish (40)`, `    Method: basic.publish` and
    /// `    Arguments` when there are any, each with its newline.
    let head: ImmortalBytes
    /// Per argument: `        Label: `.
    let argumentLines: [ImmortalBytes]
    /// Per argument that is a bit: its whole line, cleared and set.
    let bitLines: [(clear: ImmortalBytes, set: ImmortalBytes)?]

    init(_ spec: AMQPMethodSpec) {
        self.spec = spec
        let id = AMQPMethodID(classID: spec.classID, methodID: spec.methodID)
        var head = "    " + AMQPTextLines.classID(spec.classID) + "\n"
        head += "    " + AMQPTextLines.methodID(id) + "\n"
        head += "    Method: " + id.description + "\n"
        if !spec.arguments.isEmpty { head += "    Arguments\n" }
        self.head = ImmortalBytes(head)
        argumentLines = spec.arguments.map { ImmortalBytes("        " + $0.label + ": ") }
        bitLines = spec.bitLines.map { lines in
            lines.map { (ImmortalBytes("        " + $0.clear + "\n"), ImmortalBytes("        " + $0.set + "\n")) }
        }
    }

    /// The pieces of `spec`, when it is the spec's own method.
    static func of(_ spec: AMQPMethodSpec) -> AMQPMethodPieces? {
        let c = Int(spec.classID), m = Int(spec.methodID)
        guard c < byID.count, m < byID[c].count, let pieces = byID[c][m], pieces.spec === spec else { return nil }
        return pieces
    }

    private static let byID = AMQPSpec.byMethodID(AMQPMethodPieces.init)
}
